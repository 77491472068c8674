// The low-level Server, not McpServer: McpServer takes zod schemas, while the tools' schemas are
// the TypeBox (JSON Schema) contracts every other surface and the docs use.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { callTool } from './tool-call.ts';
import { TOOL_LIST } from './tool-list.ts';
import type { ToolContext } from './tool-context.ts';

const INSTRUCTIONS =
  'Agent Platform hosts software agents for insurance carriers. List the agents, send one a message, ' +
  'run a workflow and follow its run, and search the audit trail. Each tool needs the permission its ' +
  'description names; a refusal comes back as an error result naming your role.';

/**
 * The MCP server of one HTTP request (stateless streamable HTTP, docs/mcp.md "Transport and
 * sessions"): built per request around the request's caller, closed with it. The SDK's own
 * protocol handling (initialize, ping, unknown methods -32601) is kept; the tools are ours.
 */
export function createMcpServer(context: ToolContext): Server {
  const server = new Server(
    { name: 'agent-platform', title: 'Agent Platform', version: context.deps.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(context, request.params.name, request.params.arguments ?? {}),
  );
  server.onerror = (error) => context.log.debug({ err: error }, 'mcp protocol error');
  return server;
}
