import type { McpPayload } from '@agent-platform/contracts';
import { checkKeys, isHttpUrl, pathOf, readString, readStringArray, readStringTable } from '../fields.ts';
import { countingProblems, WHOLE_FILE, type FileProblems } from '../problems.ts';
import { decodeText, parseJsonObject } from './payload-text.ts';

const KEYS = ['command', 'args', 'env', 'url'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * mcp.json: an MCP server the integration runs over stdio (`command`, `args`, `env`) or reaches
 * over HTTP (`url`). Exactly one of the two; unknown keys are rejected like every JSON payload.
 */
export function checkMcpPayload(bytes: Uint8Array, problems: FileProblems): McpPayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const data = text === undefined ? undefined : parseJsonObject(text, p);
  if (data === undefined) return undefined;
  checkKeys(p, data, KEYS, '');
  const command = readString(p, data, 'command', '', { nonBlank: true });
  const url = readString(p, data, 'url', '');
  const payload: McpPayload = {
    args: readStringArray(p, data, 'args', ''),
    env: readStringTable(p, data, 'env', ''),
  };
  for (const name of Object.keys(payload.env)) {
    if (!ENV_NAME.test(name))
      p.add(
        pathOf('env', name),
        'env-name',
        'must be an environment variable name (letters, digits and _, not starting with a digit)',
      );
  }
  if (command !== undefined) payload.command = command;
  if (url !== undefined && !isHttpUrl(url))
    p.add('url', 'http-url', 'must be a URL starting with http:// or https://');
  else if (url !== undefined) payload.url = url;
  if (data.command === undefined && data.url === undefined)
    p.add(WHOLE_FILE, 'command-or-url', 'needs a command (stdio server) or a url (HTTP server)');
  if (data.command !== undefined && data.url !== undefined)
    p.add('url', 'command-or-url', 'set either command or url, not both');
  if (data.command === undefined && data.url !== undefined) {
    for (const key of ['args', 'env'] as const) {
      if (data[key] !== undefined)
        p.add(key, 'stdio-only', `${key} applies to a command (stdio) server, not to a url`);
    }
  }
  return p.count() === 0 ? payload : undefined;
}
