import { randomUUID } from 'node:crypto';
import type { RouteRecord } from '@agent-platform/api';
import type { SeededRandom } from './seeded-random.ts';

/** One request of the fuzz pass: exact bytes, so invalid JSON and lone surrogates can be sent. */
export interface FuzzCase {
  method: string;
  path: string;
  label: string;
  body?: string;
  headers?: Record<string, string>;
  /** A review case that must be refused (a 4xx), not only answered without a defect. */
  refused?: boolean;
}

/** The JSON Schema slice the generator reads (TypeBox emits plain JSON Schema). */
interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

const MB = 1024 * 1024;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Valid-looking path values by parameter, so handlers really run: real ids from the fixture for
 * agents and keys, known names otherwise. A few routes get an unknown id instead of the real one,
 * so that running them does not wreck the rest of the pass (suspending the agent, uninstalling it).
 */
function validParam(route: RouteRecord, name: string, ids: Record<string, string>): string {
  const kind = route.ids[name];
  const keep = !(route.url.endsWith('/suspend') || route.url.startsWith('/catalog/installed'));
  if (kind === 'agent' && keep) return ids.agent!;
  if (kind === 'key' && keep) return ids.key!;
  if (kind !== undefined) return randomUUID();
  if (route.url.startsWith('/vault')) return 'fuzz-key';
  if (route.url.includes('/memory/')) return 'k1';
  if (name === 'name') return keep ? 'claims-intake' : 'not-installed-package';
  return 'fnol-triage';
}

function fillPath(route: RouteRecord, values: (name: string) => string): string {
  return route.url.replace(/:([A-Za-z_]+)/g, (_, name: string) => values(name));
}

function paramsOf(route: RouteRecord): string[] {
  return [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
}

/** A value the schema accepts, as far as a generator can tell (patterns are not honoured). */
function sample(schema: Schema | undefined): unknown {
  if (schema === undefined) return 'fuzz';
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum[0];
  if (schema.anyOf !== undefined) return sample(schema.anyOf[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return 'fuzz'.padEnd(schema.minLength ?? 4, 'z');
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    case 'object':
      return sampleObject(schema);
    default:
      return 'fuzz';
  }
}

function sampleObject(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of schema.required ?? []) out[name] = sample(schema.properties?.[name]);
  return out;
}

const json = (value: unknown): string => JSON.stringify(value);

/** Bad values for one field, as JSON text (so that `"\ud800"` and `1e309` can be written). */
function badValues(field: Schema | undefined, random: SeededRandom): Array<[string, string]> {
  const values: Array<[string, string]> = [
    ['number', '123'],
    ['float', '1.5'],
    ['negative', '-1'],
    ['string', '"str"'],
    ['null', 'null'],
    ['array', '[1,"a",null]'],
    ['object', '{"nested":{"x":1}}'],
    ['boolean', 'true'],
    ['1e309', '1e309'],
    ['2^64', '18446744073709551616'],
    ['-0', '-0'],
  ];
  const type = Array.isArray(field?.type) ? field.type[0] : field?.type;
  if (type === 'string' || field?.anyOf !== undefined || field === undefined) {
    values.push(
      ['empty string', '""'],
      ['lone surrogate', '"\\ud800x"'],
      ['NUL', '"a\\u0000b"'],
      ['RTL override', '"\\u202egnp.exe"'],
      ['1 MB string', json('x'.repeat(MB))],
      ['random unicode', json(Array.from({ length: 64 }, () => String.fromCodePoint(0x20 + random.int(0x2fff))).join(''))],
    );
    if (field?.maxLength !== undefined) values.push(['maxLength + 1', json('m'.repeat(field.maxLength + 1))], ['maxLength', json('m'.repeat(field.maxLength))]);
  }
  return values;
}

/** Whole bodies: deep and wide JSON, non-objects, invalid JSON, odd numbers, wrong content types. */
function wholeBodies(): Array<[string, string, Record<string, string>?]> {
  const deepArrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);
  const deepObjects = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  const wideObject = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
  const wideArray = `[${Array.from({ length: 100_000 }, (_, i) => i).join(',')}]`;
  return [
    ['deep arrays 10k', deepArrays(10_000)],
    ['deep arrays 100k', deepArrays(100_000)],
    ['deep objects 10k', deepObjects(10_000)],
    ['deep objects 100k', deepObjects(100_000)],
    ['wide object 100k keys', wideObject],
    ['wide array 100k', wideArray],
    ['bare string', '"just a string"'],
    ['bare number', '42'],
    ['null', 'null'],
    ['empty array', '[]'],
    ['invalid JSON', '{"message":'],
    ['trailing garbage', '{}garbage'],
    ['1e309', '{"x":1e309}'],
    ['__proto__', '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'],
    ['empty JSON body', ''],
    ['text/plain', 'hello', { 'content-type': 'text/plain' }],
    ['form', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no content type', '{"a":1}', { 'content-type': '' }],
  ];
}

/** Bad path parameters, with a sample body when the route takes one. */
export function pathCases(route: RouteRecord, ids: Record<string, string>, random: SeededRandom): FuzzCase[] {
  const params = paramsOf(route);
  if (params.length === 0) return [];
  const body = BODY_METHODS.has(route.method) && route.request.body !== undefined ? json(sample(route.request.body as Schema)) : undefined;
  const bad = ['not-a-uuid', 'x'.repeat(300), '%E0%A4%A', '%00', '..%2F..%2Fetc%2Fpasswd', '%F0%9F%98%80', '00000000-0000-0000-0000-000000000000', `${randomUUID()}x`];
  const cases: FuzzCase[] = [];
  for (const target of params) {
    for (const value of [...bad, random.pick(bad)]) {
      cases.push({
        method: route.method,
        path: fillPath(route, (name) => (name === target ? value : validParam(route, name, ids))),
        label: `path ${target}=${value.slice(0, 20)}`,
        ...(body === undefined ? {} : { body }),
      });
    }
  }
  return cases;
}

/** Bad query values for each declared query parameter, repeated keys and unknown ones. */
export function queryCases(route: RouteRecord, ids: Record<string, string>, random: SeededRandom): FuzzCase[] {
  const path = fillPath(route, (name) => validParam(route, name, ids));
  const schema = route.request.querystring as Schema | undefined;
  const names = Object.keys(schema?.properties ?? {});
  const bad = ['abc', '-1', '0', '1e309', '', 'x'.repeat(5000), '%00', 'true', '99999999999999999999', '%E0%A4%A', '[]'];
  const body = BODY_METHODS.has(route.method) && route.request.body !== undefined ? json(sample(route.request.body as Schema)) : undefined;
  const cases: FuzzCase[] = [];
  const add = (query: string, label: string): void => {
    cases.push({ method: route.method, path: `${path}?${query}`, label, ...(body === undefined ? {} : { body }) });
  };
  for (const name of names) {
    for (const value of bad) add(`${name}=${value}`, `query ${name}=${value.slice(0, 20)}`);
    add(`${name}=1&${name}=2&${name}=${random.pick(bad)}`, `query ${name} repeated`);
  }
  add('zzz_unknown=1', 'unknown query');
  return cases;
}

/** Bad bodies: every field with wrong types and odd strings, then whole-body oddities. */
export function bodyCases(route: RouteRecord, ids: Record<string, string>, random: SeededRandom): FuzzCase[] {
  if (!BODY_METHODS.has(route.method)) return [];
  const path = fillPath(route, (name) => validParam(route, name, ids));
  const schema = route.request.body as Schema | undefined;
  const cases: FuzzCase[] = [];
  const base = schema === undefined ? {} : sampleObject(schema);
  const fields = Object.entries(schema?.properties ?? {});
  for (const [name, field] of fields) {
    for (const [label, value] of badValues(field, random)) {
      const others = Object.entries(base).filter(([k]) => k !== name).map(([k, v]) => `${json(k)}:${json(v)}`);
      cases.push({ method: route.method, path, label: `body ${name}: ${label}`, body: `{${[...others, `${json(name)}:${value}`].join(',')}}` });
    }
    // One level down, for objects such as invoke's `source`.
    for (const [inner, innerField] of Object.entries(field.properties ?? {}).slice(0, 5)) {
      const [label, value] = random.pick(badValues(innerField, random));
      const nested = `{${json(inner)}:${value}}`;
      const others = Object.entries(base).filter(([k]) => k !== name).map(([k, v]) => `${json(k)}:${json(v)}`);
      cases.push({ method: route.method, path, label: `body ${name}.${inner}: ${label}`, body: `{${[...others, `${json(name)}:${nested}`].join(',')}}` });
    }
  }
  if (schema !== undefined) {
    cases.push({ method: route.method, path, label: 'valid-looking body', body: json(base) });
    cases.push({ method: route.method, path, label: 'unknown field', body: json({ ...base, zzz_unknown: 'x' }) });
  }
  for (const [label, body, headers] of wholeBodies()) cases.push({ method: route.method, path, label, body, ...(headers === undefined ? {} : { headers }) });
  return cases;
}

/**
 * Inputs a review found defects with (docs/http.md "Input limits and the fuzz pass"): each is
 * answered within the deadline without a defect, like any other input, and those marked `refused`
 * must be refused (4xx in the envelope).
 * `ids.slack` names a Slack channel the fixture created (its inbound signature check).
 */
export function reviewCases(ids: Record<string, string>): FuzzCase[] {
  const hostileName = 'a.'.repeat(32 * 1024) + '@';
  const digits = '1 '.repeat(32 * 1024);
  return [
    // A superlinear PII detector blocked the event loop for seconds on these shapes.
    { method: 'POST', path: `/agents/${ids.agent}/send`, label: 'review: person_name a.a.@', body: json({ message: hostileName }) },
    { method: 'POST', path: `/agents/${ids.agent}/send`, label: 'review: person_name 1 1 1', body: json({ message: digits }) },
    { method: 'POST', path: `/agents/${ids.agent}/send`, label: 'review: policy cue then spaces', body: json({ message: `policy${' '.repeat(4096)}x` }) },
    // A misspelt secret was stored and echoed in clear.
    {
      method: 'POST',
      path: '/channels',
      label: 'review: telegram config with an unknown field',
      refused: true,
      body: json({ id: 'fuzz-typo', kind: 'telegram', default_agent: ids.agent, config: { token: '123:secret' } }),
    },
    // The placeholder followed a changed destination.
    {
      method: 'PUT',
      path: `/channels/${ids.slack}`,
      label: 'review: slack placeholder with a new api_base_url',
      refused: true,
      body: json({ kind: 'slack', default_agent: ids.agent, config: { bot_token: '••••••••', signing_secret: '••••••••', api_base_url: 'http://attacker.example' } }),
    },
    // A refused Slack inbound answered a flat body.
    { method: 'POST', path: `/channels/${ids.slack}/inbound`, label: 'review: slack inbound with no signature', refused: true, body: json({ type: 'event_callback' }) },
    // restore {path} read any file and echoed its hash.
    { method: 'POST', path: '/backup/restore', label: 'review: restore path outside the backups directory', refused: true, body: json({ path: '/etc/passwd' }) },
    { method: 'POST', path: '/backup/restore', label: 'review: restore path traversal', refused: true, body: json({ path: '/tmp/../etc/passwd' }) },
  ];
}
