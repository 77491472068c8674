import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpPayload } from '@agent-platform/contracts';
import {
  IDEMPOTENCY_META_KEY,
  IntegrationCallError,
  type IntegrationConnection,
  type IntegrationTool,
} from '@agent-platform/domain';
import { guardedFetch } from '@agent-platform/net';
import { checkUrlTarget } from '@agent-platform/net';
import { toolResultText, type McpToolResult } from './tool-result-text.ts';

export interface McpConnectOptions {
  id: string;
  payload: McpPayload;
  key: string | null;
  timeoutMs: number;
  /** The stdio server's environment (stdio-env.ts), built by the connector. */
  env: Record<string, string>;
  /** The stdio server's working directory. */
  cwd: string;
  allowPrivate: () => boolean;
  clientVersion: string;
}

/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2000;
/** Pages of `tools/list` read at most (a server that never stops paging is cut off). */
const MAX_TOOL_PAGES = 50;

/**
 * One MCP client session over the official SDK: a stdio server (spawned with `command`, `args`
 * and the prepared env; its stderr tail goes into error messages) or a streamable-HTTP server
 * (`url`, reached through the D9-guarded fetch, `Authorization: Bearer <key>` when there is a
 * key). The connection counts as lost when the server process exits or, for HTTP, when a
 * request cannot reach the server at all.
 */
export async function openMcpConnection(options: McpConnectOptions): Promise<IntegrationConnection> {
  const stderr = { tail: '' };
  const transport = createTransport(options, stderr);
  const client = new Client({ name: 'agent-platform', version: options.clientVersion }, { capabilities: {} });
  let closing = false;
  let markLost: (reason: string) => void = () => undefined;
  const lost = new Promise<string>((resolve) => (markLost = resolve));
  const exitReason = (): string => `the server process exited${stderrSuffix(stderr.tail)}`;
  client.onclose = () => {
    if (!closing)
      markLost(options.payload.url === undefined ? exitReason() : 'the connection to the server closed');
  };
  client.onerror = () => undefined; // Each failing request reports its own error.
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    closing = true;
    await client.close().catch(() => undefined);
    throw new Error(handshakeFailure(options, error, stderr.tail), { cause: error });
  }

  const unreachable = (error: unknown): IntegrationCallError => {
    const message = `the server is unreachable: ${(error as Error).message}`;
    markLost(message);
    return new IntegrationCallError('connection_lost', message);
  };
  const classify = (error: unknown, signal: AbortSignal | undefined, timeoutMs: number): unknown => {
    if (signal?.aborted === true)
      return new IntegrationCallError('aborted', 'the call was cancelled by its caller');
    if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number))
      return new IntegrationCallError('timeout', `no answer within ${timeoutMs / 1000} s`);
    if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number))
      return new IntegrationCallError(
        'connection_lost',
        options.payload.url === undefined
          ? `${exitReason()} during the call`
          : 'the connection closed during the call',
      );
    if (error instanceof McpError) return error;
    return unreachable(error);
  };

  return {
    async listTools(timeoutMs) {
      const tools: IntegrationTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
        const result = await client
          .listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs })
          .catch((e: unknown) => {
            throw classify(e, undefined, timeoutMs);
          });
        for (const tool of result.tools)
          tools.push({
            name: tool.name,
            description: tool.description ?? tool.title ?? '',
            input_schema: tool.inputSchema,
            read_only: tool.annotations?.readOnlyHint === true,
          });
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    },
    async call(tool, args, callOptions) {
      const { signal, idempotencyKey, timeoutMs } = callOptions;
      try {
        const result = (await client.callTool(
          {
            name: tool,
            arguments: args,
            ...(idempotencyKey === undefined ? {} : { _meta: { [IDEMPOTENCY_META_KEY]: idempotencyKey } }),
          },
          undefined,
          { timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) },
        )) as McpToolResult;
        return { text: toolResultText(result), is_error: result.isError === true };
      } catch (error) {
        const classified = classify(error, signal, timeoutMs);
        // A JSON-RPC error about the call itself (unknown tool, bad arguments) is the server's answer.
        if (classified instanceof McpError) return { text: `error: ${classified.message}`, is_error: true };
        throw classified;
      }
    },
    async ping(timeoutMs) {
      await client.ping({ timeout: timeoutMs }).catch((e: unknown) => {
        throw classify(e, undefined, timeoutMs);
      });
    },
    lost,
    async close() {
      closing = true;
      await client.close().catch(() => undefined);
    },
  };
}

function createTransport(options: McpConnectOptions, stderr: { tail: string }): Transport {
  const { payload } = options;
  if (payload.url !== undefined) {
    const url = new URL(payload.url);
    checkUrlTarget(url, options.allowPrivate());
    return new StreamableHTTPClientTransport(url, {
      fetch: guardedFetch(options.allowPrivate),
      ...(options.key === null
        ? {}
        : { requestInit: { headers: { authorization: `Bearer ${options.key}` } } }),
    });
  }
  const transport = new StdioClientTransport({
    command: payload.command ?? '',
    args: payload.args,
    env: options.env,
    cwd: options.cwd,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr.tail = (stderr.tail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
  });
  return transport;
}

function stderrSuffix(tail: string): string {
  const lines = tail.trim().split('\n').slice(-3).join(' | ').trim();
  return lines === '' ? '' : ` (stderr: ${lines.slice(-500)})`;
}

function handshakeFailure(options: McpConnectOptions, error: unknown, stderrTail: string): string {
  const e = error as { code?: unknown; message?: string };
  const where = options.payload.url ?? `\`${options.payload.command ?? ''}\``;
  if (e.code === 'ENOENT') return `could not start ${where}: command not found`;
  if (e.code === 'EACCES') return `could not start ${where}: permission denied`;
  if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number))
    return `${where} did not complete the MCP handshake within ${options.timeoutMs / 1000} s${stderrSuffix(stderrTail)}`;
  if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number))
    return `${where} exited before the MCP handshake completed${stderrSuffix(stderrTail)}`;
  return `could not connect to ${where}: ${e.message ?? String(error)}${stderrSuffix(stderrTail)}`;
}
