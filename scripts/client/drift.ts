import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenApiDocument } from './api-document.ts';
import { CLIENT_FILES, GENERATE_COMMAND, ROOT } from './paths.ts';
import type { ClientFile } from './render-client.ts';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
/** Enough lines to see what changed; a rename of many routes is summarised after this many. */
const MAX_LINES = 40;

function operations(document: OpenApiDocument | null): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const [path, item] of Object.entries(document?.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.has(method))
        found.set(`${method.toUpperCase()} ${path}`, operation as Record<string, unknown>);
    }
  }
  return found;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Which parts of one operation differ: parameters, request body, each response status. */
function operationChanges(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const parts: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === 'responses') continue;
    if (!same(before[key], after[key])) parts.push(key);
  }
  const was = (before.responses ?? {}) as Record<string, unknown>;
  const is = (after.responses ?? {}) as Record<string, unknown>;
  for (const status of [...new Set([...Object.keys(was), ...Object.keys(is)])].sort()) {
    if (!(status in was)) parts.push(`response ${status} added`);
    else if (!(status in is)) parts.push(`response ${status} removed`);
    else if (!same(was[status], is[status])) parts.push(`response ${status}`);
  }
  return parts;
}

/**
 * What changed from the committed document to the server's, one line each: `+ POST /x` (new
 * operation), `- GET /y` (gone), `~ GET /z: requestBody, response 200` (changed parts), and
 * top-level keys such as `~ info`. Empty when the two are the same.
 */
export function describeDrift(committed: OpenApiDocument | null, current: OpenApiDocument): string[] {
  if (committed === null) return [`+ ${CLIENT_FILES.document} (missing: no snapshot committed yet)`];
  const lines: string[] = [];
  const was = operations(committed);
  const is = operations(current);
  for (const [key, operation] of is) {
    const before = was.get(key);
    if (before === undefined) lines.push(`+ ${key}`);
    else if (!same(before, operation))
      lines.push(`~ ${key}: ${operationChanges(before, operation).join(', ')}`);
  }
  for (const key of was.keys()) if (!is.has(key)) lines.push(`- ${key}`);
  for (const key of new Set([...Object.keys(committed), ...Object.keys(current)])) {
    if (key === 'paths') continue;
    if (!same(committed[key], current[key]))
      lines.push(
        `~ ${key}${key === 'info' ? ` (version ${committed.info?.version} -> ${current.info?.version})` : ''}`,
      );
  }
  if (lines.length === 0 && !same(committed, current)) lines.push('~ paths (order or path-level keys)');
  return lines;
}

/** Reads a committed file; null when it does not exist. */
async function readCommitted(path: string): Promise<string | null> {
  try {
    return await readFile(join(ROOT, path), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function parseDocument(text: string | null): OpenApiDocument | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as OpenApiDocument;
  } catch {
    return null;
  }
}

/**
 * Compares freshly generated files with the committed ones. Null when every file is as generated;
 * otherwise the message a developer needs: which files are stale, the one command that fixes them,
 * and which operations changed.
 */
export async function clientDrift(
  current: OpenApiDocument,
  generated: readonly ClientFile[],
  read: (path: string) => Promise<string | null> = readCommitted,
): Promise<string | null> {
  const stale: string[] = [];
  for (const file of generated) if ((await read(file.path)) !== file.text) stale.push(file.path);
  if (stale.length === 0) return null;
  const changes = describeDrift(parseDocument(await read(CLIENT_FILES.document)), current);
  const shown = changes.slice(0, MAX_LINES);
  if (changes.length > MAX_LINES) shown.push(`... and ${changes.length - MAX_LINES} more`);
  return [
    `The typed client (libs/client) is out of date with the api: ${stale.join(' and ')} ${stale.length === 1 ? 'differs' : 'differ'} from what the server generates.`,
    `Fix: run \`${GENERATE_COMMAND}\` and commit the result.`,
    ...(changes.length === 0
      ? [
          `The OpenAPI document is unchanged: ${CLIENT_FILES.types} was edited by hand, or another openapi-typescript version generates it differently.`,
        ]
      : ['What changed in the OpenAPI document (committed -> server):', ...shown.map((line) => `  ${line}`)]),
  ].join('\n');
}
