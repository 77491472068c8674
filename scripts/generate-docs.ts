// Regenerates the generated parts of docs/ from their source of truth in code. Run with
// `npm run docs:generate`; tests fail when a generated part is out of date.
import { readFile, writeFile } from 'node:fs/promises';
import { renderPermissionTable } from '@agent-platform/domain';

const START = '<!-- permissions:start -->';
const END = '<!-- permissions:end -->';

const file = new URL('../docs/permissions.md', import.meta.url);
const text = await readFile(file, 'utf8');
const from = text.indexOf(START);
const to = text.indexOf(END);
if (from < 0 || to < from) throw new Error(`docs/permissions.md: markers ${START} ... ${END} not found`);
const next = `${text.slice(0, from + START.length)}\n${renderPermissionTable()}\n${text.slice(to)}`;
if (next !== text) await writeFile(file, next);
console.log(next === text ? 'docs/permissions.md is up to date' : 'docs/permissions.md updated');
