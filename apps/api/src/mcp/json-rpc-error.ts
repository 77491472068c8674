import type { FastifyReply } from 'fastify';

// The JSON-RPC error shapes of the /mcp route. No MCP SDK here: the route registers and refuses
// without loading it; json-rpc.ts checks messages with the SDK's schemas once a POST comes.

/** What the /mcp content-type parser leaves in `request.body` (mcp-routes.ts): it never fails itself. */
export type McpBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'invalid_json'; reason: string }
  | { kind: 'unsupported'; contentType: string };

type Id = string | number | null;

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: Id;
  error: { code: number; message: string; data?: unknown };
}

/** A refusal before the MCP server sees the message: the HTTP status and a JSON-RPC error body. */
export interface JsonRpcRefusal {
  status: number;
  body: JsonRpcErrorBody;
}

export function jsonRpcError(
  status: number,
  id: Id,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcRefusal {
  return {
    status,
    body: { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } },
  };
}

/** Sends a refusal as its HTTP status with the JSON-RPC error body. */
export function sendRefusal(reply: FastifyReply, refusal: JsonRpcRefusal): FastifyReply {
  return reply
    .code(refusal.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(refusal.body));
}
