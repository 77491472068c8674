import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, writeFixture, type FixtureName } from './package-fixtures.ts';

/** One change to a valid fixture, so that a test shows exactly one rule firing. */
export interface Mutation {
  manifest?: (text: string) => string;
  payload?: (text: string) => string;
  /** Files to add (path -> text). */
  extra?: Record<string, string>;
  /** Files to delete after writing. */
  remove?: string[];
}

let counter = 0;

/** Writes fixture `name` with `mutation` applied under `root`; returns the package directory. */
export async function writeMutated(
  root: string,
  name: FixtureName,
  mutation: Mutation = {},
): Promise<string> {
  const base = FIXTURES[name];
  const fixture = {
    manifest: (mutation.manifest ?? same)(base.manifest),
    payloadFile: base.payloadFile,
    payload: (mutation.payload ?? same)(base.payload),
  };
  const dir = await writeFixture(root, `${name}-${++counter}`, fixture, mutation.extra);
  for (const path of mutation.remove ?? []) await rm(join(dir, path), { recursive: true });
  return dir;
}

const same = (text: string) => text;

/** Replaces the first `key = ...` line (TOML) or `key: ...` line (YAML); `undefined` deletes it. */
export function setKey(key: string, value: string | undefined): (text: string) => string {
  return (text) => {
    const line = new RegExp(`^${key}( = |: ).*$\\n?`, 'm');
    if (!line.test(text)) throw new Error(`fixture has no line for ${key}`);
    return text.replace(line, (match) =>
      value === undefined ? '' : `${key}${match.includes(' = ') ? ' = ' : ': '}${value}\n`,
    );
  };
}

/** Inserts `lines` right after the first line equal to `after`. */
export function insertAfter(after: string, lines: string): (text: string) => string {
  return (text) => {
    if (!text.includes(`${after}\n`)) throw new Error(`fixture has no line ${after}`);
    return text.replace(`${after}\n`, `${after}\n${lines}\n`);
  };
}

/**
 * Sets the value at a dotted path of a JSON payload (`steps.0.mode`); `undefined` deletes it.
 * The empty path replaces the whole document.
 */
export function setJson(path: string, value: unknown): (text: string) => string {
  return (text) => {
    if (path === '') return JSON.stringify(value, null, 2);
    const doc = JSON.parse(text) as unknown;
    const keys = path.split('.');
    const last = keys.pop() as string;
    let target = doc as Record<string, unknown>;
    for (const key of keys) target = target[key] as Record<string, unknown>;
    if (value === undefined) delete target[last];
    else target[last] = value;
    return JSON.stringify(doc, null, 2);
  };
}

/** Replaces the markdown body after the frontmatter. */
export function setBody(body: string): (text: string) => string {
  return (text) => {
    const close = text.indexOf('\n---\n', 4);
    return `${text.slice(0, close)}\n---\n${body}`;
  };
}
