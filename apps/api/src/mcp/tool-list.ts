import { MCP_TOOLS } from '@agent-platform/contracts';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

// Without the SDK at run time (only its types): the api package exports the tool reference the
// docs are generated from, and importing the package must not load the SDK (mcp-routes.ts).

/** A plain JSON Schema object (TypeBox schemas carry non-enumerable bookkeeping; JSON drops it). */
function plain(schema: unknown): Tool['inputSchema'] {
  return JSON.parse(JSON.stringify(schema)) as Tool['inputSchema'];
}

/** What tools/list answers: the same for every caller (a refusal is explained at call time). */
export const TOOL_LIST: Tool[] = MCP_TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: `${tool.description} Needs the ${tool.action} permission, as ${tool.route}.`,
  inputSchema: plain(tool.input),
  outputSchema: plain(tool.output),
  annotations: {
    title: tool.title,
    readOnlyHint: tool.readOnly,
    destructiveHint: false,
    idempotentHint: tool.readOnly,
    openWorldHint: false,
  },
}));
