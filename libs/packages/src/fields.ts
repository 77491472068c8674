import { didYouMean } from '@agent-platform/contracts';
import type { FileProblems } from './problems.ts';

/**
 * Small readers shared by every file's checks. Each reads one key of a parsed table, reports
 * a `required` or `type` problem under its dotted path and returns the value or undefined, so
 * the caller goes on checking the rest of the file instead of stopping at the first fault.
 */

export type Table = Record<string, unknown>;

export function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** `at` + `key` as a dotted path; odd key names are quoted (`env."MY VAR"`). */
export function pathOf(at: string, key: string | number): string {
  if (typeof key === 'number') return `${at}[${key}]`;
  const segment = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
  return at === '' ? segment : `${at}.${segment}`;
}

export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a table';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a float';
  return `a ${typeof value}`;
}

export function typeProblem(p: FileProblems, field: string, expected: string, value: unknown): void {
  p.add(field, 'type', `must be ${expected} (got ${describeValue(value)})`);
}

/**
 * Reports each key of `table` that is not in `allowed`. `forbidden` names keys that are refused
 * with a reason of their own (rule `forbidden-key`), such as AGENT.md's `model`.
 */
export function checkKeys(
  p: FileProblems,
  table: Table,
  allowed: readonly string[],
  at: string,
  forbidden: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(table)) {
    if (allowed.includes(key)) continue;
    const reason = forbidden[key];
    if (reason !== undefined) p.add(pathOf(at, key), 'forbidden-key', reason);
    else p.add(pathOf(at, key), 'unknown-key', `unknown key${didYouMean(key, allowed)}`);
  }
}

interface StringOptions {
  required?: boolean;
  /** Refuse an empty or whitespace-only value (rule `non-blank`). */
  nonBlank?: boolean;
}

export function readString(
  p: FileProblems,
  table: Table,
  key: string,
  at: string,
  options: StringOptions = {},
): string | undefined {
  const value = table[key];
  const field = pathOf(at, key);
  if (value === undefined) {
    if (options.required === true) p.add(field, 'required', 'required key is missing');
    return undefined;
  }
  if (typeof value !== 'string') {
    typeProblem(p, field, 'a string', value);
    return undefined;
  }
  if (options.nonBlank === true && value.trim() === '') {
    p.add(field, 'non-blank', 'must not be blank');
    return undefined;
  }
  return value;
}

export function readBoolean(p: FileProblems, table: Table, key: string, at: string): boolean | undefined {
  const value = table[key];
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return value;
  typeProblem(p, pathOf(at, key), 'a boolean', value);
  return undefined;
}

export function readTable(
  p: FileProblems,
  table: Table,
  key: string,
  at: string,
  options: { required?: boolean } = {},
): Table | undefined {
  const value = table[key];
  const field = pathOf(at, key);
  if (value === undefined) {
    if (options.required === true) p.add(field, 'required', 'required key is missing');
    return undefined;
  }
  if (isTable(value)) return value;
  typeProblem(p, field, 'a table', value);
  return undefined;
}

export function readArray(
  p: FileProblems,
  table: Table,
  key: string,
  at: string,
  options: { required?: boolean } = {},
): unknown[] | undefined {
  const value = table[key];
  const field = pathOf(at, key);
  if (value === undefined) {
    if (options.required === true) p.add(field, 'required', 'required key is missing');
    return undefined;
  }
  if (Array.isArray(value)) return value as unknown[];
  typeProblem(p, field, 'an array', value);
  return undefined;
}

/** An array of strings; absent = empty. Each bad item is reported at its index. */
export function readStringArray(
  p: FileProblems,
  table: Table,
  key: string,
  at: string,
  options: { nonBlank?: boolean } = {},
): string[] {
  return readStringEntries(p, table, key, at, options).map(([, value]) => value);
}

/** Like `readStringArray`, keeping each good item's index in the file for later problems. */
export function readStringEntries(
  p: FileProblems,
  table: Table,
  key: string,
  at: string,
  options: { nonBlank?: boolean } = {},
): [number, string][] {
  const items = readArray(p, table, key, at) ?? [];
  const out: [number, string][] = [];
  items.forEach((item, i) => {
    const field = pathOf(pathOf(at, key), i);
    if (typeof item !== 'string') typeProblem(p, field, 'a string', item);
    else if (options.nonBlank === true && item.trim() === '') p.add(field, 'non-blank', 'must not be blank');
    else out.push([i, item]);
  });
  return out;
}

/** A table whose values are all strings; absent = empty. */
export function readStringTable(
  p: FileProblems,
  table: Table,
  key: string,
  at: string,
): Record<string, string> {
  const inner = readTable(p, table, key, at) ?? {};
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(inner)) {
    if (typeof value === 'string') out[name] = value;
    else typeProblem(p, pathOf(pathOf(at, key), name), 'a string', value);
  }
  return out;
}

export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//.test(value)) return false;
  try {
    return new URL(value).host !== '';
  } catch {
    return false;
  }
}
