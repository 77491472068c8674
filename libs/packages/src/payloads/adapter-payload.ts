import { HTTP_METHODS, type AdapterOperation, type AdapterPayload } from '@agent-platform/contracts';
import {
  checkKeys,
  isHttpUrl,
  isTable,
  pathOf,
  readArray,
  readString,
  typeProblem,
  type Table,
} from '../fields.ts';
import { countingProblems, type FileProblems } from '../problems.ts';
import { readSchema } from './contract-payload.ts';
import { decodeText, parseJsonObject } from './payload-text.ts';
import { checkToolName } from './tool-name.ts';

const KEYS = ['kind', 'base_url', 'wsdl_url', 'operations'] as const;
const OPERATION_KEYS = [
  'name',
  'description',
  'method',
  'path',
  'soap_action',
  'input_schema',
  'output_schema',
] as const;

/**
 * adapter.json: a REST or SOAP service the platform calls itself, each operation exposed as one
 * native tool. The spec names the file but not its shape; this one is documented in
 * docs/packages.md. REST operations need `method` and `path`, SOAP operations `soap_action`.
 */
export function checkAdapterPayload(bytes: Uint8Array, problems: FileProblems): AdapterPayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const data = text === undefined ? undefined : parseJsonObject(text, p);
  if (data === undefined) return undefined;
  checkKeys(p, data, KEYS, '');
  const kind = readString(p, data, 'kind', '', { required: true });
  if (kind !== undefined && kind !== 'rest' && kind !== 'soap')
    p.add('kind', 'adapter-kind', `must be rest or soap (got ${JSON.stringify(kind.slice(0, 20))})`);
  const baseUrl = readUrl(p, data, 'base_url', true);
  const wsdlUrl = readUrl(p, data, 'wsdl_url', false);
  if (wsdlUrl !== undefined && kind === 'rest')
    p.add('wsdl_url', 'soap-only', 'wsdl_url applies to a soap adapter');
  const items = readArray(p, data, 'operations', '', { required: true }) ?? [];
  if (Array.isArray(data.operations) && items.length === 0)
    p.add('operations', 'min-items', 'an adapter needs at least one operation');
  const operations: AdapterOperation[] = [];
  items.forEach((item, i) => {
    const at = pathOf('operations', i);
    const operation = checkOperation(p, item, at, kind);
    if (operation === undefined) return;
    if (operations.some((o) => o.name === operation.name))
      p.add(pathOf(at, 'name'), 'duplicate-tool', `operation '${operation.name}' is defined more than once`);
    else operations.push(operation);
  });
  if (p.count() > 0 || baseUrl === undefined) return undefined;
  const payload: AdapterPayload = { kind: kind as AdapterPayload['kind'], base_url: baseUrl, operations };
  if (wsdlUrl !== undefined) payload.wsdl_url = wsdlUrl;
  return payload;
}

function readUrl(p: FileProblems, data: Table, key: string, required: boolean): string | undefined {
  const url = readString(p, data, key, '', { required });
  if (url === undefined || isHttpUrl(url)) return url;
  p.add(key, 'http-url', 'must be a URL starting with http:// or https://');
  return undefined;
}

function checkOperation(
  p: FileProblems,
  item: unknown,
  at: string,
  kind: string | undefined,
): AdapterOperation | undefined {
  if (!isTable(item)) {
    typeProblem(p, at, 'an operation object', item);
    return undefined;
  }
  checkKeys(p, item, OPERATION_KEYS, at);
  const name = readString(p, item, 'name', at, { required: true });
  const operation: AdapterOperation = { name: name ?? '' };
  const description = readString(p, item, 'description', at);
  if (description !== undefined) operation.description = description;
  const input = readSchema(p, item, 'input_schema', at, false);
  if (input !== undefined) operation.input_schema = input;
  const output = readSchema(p, item, 'output_schema', at, false);
  if (output !== undefined) operation.output_schema = output;
  if (kind === 'rest') checkRestOperation(p, item, at, operation);
  if (kind === 'soap') checkSoapOperation(p, item, at, operation);
  return name !== undefined && checkToolName(p, name, pathOf(at, 'name')) ? operation : undefined;
}

function checkRestOperation(p: FileProblems, item: Table, at: string, operation: AdapterOperation): void {
  const method = readString(p, item, 'method', at, { required: true });
  const upper = method?.toUpperCase();
  if (upper !== undefined && (HTTP_METHODS as readonly string[]).includes(upper))
    operation.method = upper as AdapterOperation['method'];
  else if (method !== undefined)
    p.add(pathOf(at, 'method'), 'http-method', `must be one of ${HTTP_METHODS.join(', ')}`);
  const path = readString(p, item, 'path', at, { required: true });
  if (path !== undefined && path.startsWith('/')) operation.path = path;
  else if (path !== undefined)
    p.add(pathOf(at, 'path'), 'operation-path', 'must start with / (it is appended to base_url)');
  if (item.soap_action !== undefined)
    p.add(pathOf(at, 'soap_action'), 'soap-only', 'soap_action applies to a soap adapter');
}

function checkSoapOperation(p: FileProblems, item: Table, at: string, operation: AdapterOperation): void {
  const action = readString(p, item, 'soap_action', at, { required: true, nonBlank: true });
  if (action !== undefined) operation.soap_action = action;
  for (const key of ['method', 'path'] as const) {
    if (item[key] !== undefined) p.add(pathOf(at, key), 'rest-only', `${key} applies to a rest adapter`);
  }
}
