// Regenerates the generated parts of docs/ from their source of truth in code. Run with
// `npm run docs:generate`; tests fail when a generated part is out of date.
import { readFile, writeFile } from 'node:fs/promises';
import { renderConfigReference } from '@agent-platform/config';
import { renderPermissionTable } from '@agent-platform/domain';
import { renderMcpToolReference } from '@agent-platform/api';

/** Replaces what sits between `<!-- <marker>:start -->` and `<!-- <marker>:end -->` in a doc. */
async function regenerate(doc: string, marker: string, content: string): Promise<void> {
  const start = `<!-- ${marker}:start -->\n`;
  const end = `<!-- ${marker}:end -->`;
  const file = new URL(`../docs/${doc}`, import.meta.url);
  const text = await readFile(file, 'utf8');
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/${doc}: markers ${start.trim()} ... ${end} not found`);
  const next = `${text.slice(0, from + start.length)}${content}${text.slice(to)}`;
  if (next !== text) await writeFile(file, next);
  console.log(next === text ? `docs/${doc} is up to date` : `docs/${doc} updated`);
}

await regenerate('permissions.md', 'permissions', `${renderPermissionTable()}\n`);
await regenerate('config.md', 'config-reference', renderConfigReference());
await regenerate('mcp.md', 'mcp-tools', renderMcpToolReference());
