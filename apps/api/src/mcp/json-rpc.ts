import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';

export { jsonRpcError, type JsonRpcErrorBody, type JsonRpcRefusal, type McpBody } from './json-rpc-error.ts';
import { jsonRpcError, type JsonRpcRefusal, type McpBody } from './json-rpc-error.ts';

/** The request methods the server answers, with the SDK's schema for each (their params). */
const PARAMS = new Map<
  string,
  { safeParse(value: unknown): { success: boolean; error?: { issues: Issue[] } } }
>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

interface Issue {
  path: PropertyKey[];
  message: string;
}

/** "params.name: Invalid input: expected string, received number" for the first few issues. */
function describe(issues: readonly Issue[] | undefined): string {
  return (issues ?? [])
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(message)'}: ${issue.message}`)
    .join('; ');
}

const isId = (value: unknown): value is string | number =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

/**
 * Checks one POST to /mcp before the SDK transport sees it, and answers what is wrong in
 * JSON-RPC's own terms (docs/mcp.md "Errors"). The SDK would answer some of these too, but with
 * -32700 for valid JSON that is not a JSON-RPC message, and -32603 (with a schema dump) for bad
 * params; JSON-RPC 2.0 says -32600 and -32602.
 * - 406 / 415 (-32000): the Accept and Content-Type the streamable HTTP transport requires;
 * - 400 -32700: no body, or not JSON;
 * - 400 -32600: a batch (MCP 2025-06-18 removed batching; the SDK client never sends one), not an
 *   object, `jsonrpc` not "2.0", a bad `id` or `method`, or no valid message shape at all;
 * - 200 -32602: a request of a method we serve whose params do not fit it (an answer to a valid
 *   request, like -32601 for an unknown method, which the SDK gives).
 */
export function checkMcpPost(
  accept: string | undefined,
  body: McpBody | undefined,
): { message: JSONRPCMessage } | JsonRpcRefusal {
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return jsonRpcError(
      406,
      null,
      -32000,
      'Not Acceptable: Client must accept both application/json and text/event-stream',
    );
  }
  if (body?.kind === 'unsupported')
    return jsonRpcError(415, null, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  if (body === undefined)
    return jsonRpcError(
      400,
      null,
      ErrorCode.ParseError,
      'Parse error: the request body is empty; send one JSON-RPC message',
    );
  if (body.kind === 'invalid_json')
    return jsonRpcError(400, null, ErrorCode.ParseError, `Parse error: ${body.reason}`);
  const value = body.value;
  if (Array.isArray(value)) {
    return jsonRpcError(
      400,
      null,
      ErrorCode.InvalidRequest,
      'Invalid Request: batches are not supported (removed in MCP 2025-06-18); send one message per request',
    );
  }
  if (typeof value !== 'object' || value === null)
    return jsonRpcError(
      400,
      null,
      ErrorCode.InvalidRequest,
      'Invalid Request: a JSON-RPC message is a JSON object',
    );
  const message = value as Record<string, unknown>;
  const id = isId(message.id) ? message.id : null;
  const invalid = (why: string): JsonRpcRefusal =>
    jsonRpcError(400, id, ErrorCode.InvalidRequest, `Invalid Request: ${why}`);
  if (message.jsonrpc !== '2.0') return invalid('"jsonrpc" must be "2.0"');
  if ('id' in message && !isId(message.id)) return invalid('"id" must be a string or a number');
  if ('method' in message && (typeof message.method !== 'string' || message.method === ''))
    return invalid('"method" must be a non-empty string');
  if (!('method' in message) && !('result' in message) && !('error' in message))
    return invalid(
      'a message needs "method" (a request or notification), or "result" or "error" (a response)',
    );
  const parsed = JSONRPCMessageSchema.safeParse(message);
  if (!parsed.success) return invalid(describe(parsed.error.issues));
  const params =
    typeof message.method === 'string' && 'id' in message ? PARAMS.get(message.method) : undefined;
  const checked = params?.safeParse(message);
  if (checked !== undefined && !checked.success) {
    return jsonRpcError(
      200,
      id,
      ErrorCode.InvalidParams,
      `Invalid params for ${String(message.method)}: ${describe(checked.error?.issues)}`,
    );
  }
  return { message: parsed.data };
}
