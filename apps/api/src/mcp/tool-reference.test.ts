import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { MCP_TOOLS } from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import { renderMcpToolReference } from './tool-reference.ts';

const DOC = fileURLToPath(new URL('../../../../docs/mcp.md', import.meta.url));
const START = '<!-- mcp-tools:start -->\n';
const END = '<!-- mcp-tools:end -->';

describe('docs/mcp.md', () => {
  it('holds exactly the tool reference rendered from the schemas the server lists (npm run docs:generate)', async () => {
    const doc = await readFile(DOC, 'utf8');
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    expect(doc.slice(start + START.length, end)).toBe(renderMcpToolReference());
  });

  it('documents each tool with its permission, its arguments and both schemas', () => {
    const reference = renderMcpToolReference();
    for (const tool of MCP_TOOLS) {
      expect(reference).toContain(`### \`${tool.name}\`: ${tool.title}`);
      expect(reference).toContain(`Permission: \`${tool.action}\`, as \`${tool.route}\``);
    }
    expect(reference).toContain('| `wait_secs` | integer, 0-300 | no |');
    expect(reference).toContain('| `limit` | integer, 1 or more | no (default `20`) |');
    expect(reference.match(/Input schema/g)).toHaveLength(5);
    expect(reference.match(/Output schema/g)).toHaveLength(5);
  });
});
