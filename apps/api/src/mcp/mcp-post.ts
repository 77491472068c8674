import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import { clientGoneSignal } from '../http/event-stream.ts';
import type { AgentInvoker } from '../invocation/agent-invoker.ts';
import { sendRefusal, type McpBody } from './json-rpc-error.ts';
import { checkMcpPost } from './json-rpc.ts';
import { createMcpServer } from './mcp-server.ts';

/**
 * One POST to /mcp (mcp-routes.ts), loaded by the first one: the message checked in JSON-RPC's
 * terms, then answered by a fresh stateless MCP server and transport of the official SDK.
 */
export async function answerMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  { deps, invoker }: { deps: ApiDeps; invoker: AgentInvoker },
): Promise<FastifyReply> {
  const checked = checkMcpPost(request.headers.accept, request.body as McpBody | undefined);
  if ('status' in checked) return sendRefusal(reply, checked);
  const server = createMcpServer({
    deps,
    caller: request.caller,
    requestId: request.id,
    signal: clientGoneSignal(reply),
    invoker,
    log: request.log,
  });
  // Stateless mode takes a fresh transport per request (the SDK refuses to reuse one).
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(webRequestOf(request), {
      parsedBody: checked.message,
    });
    // The request timeout may have answered 408 meanwhile: nothing more can be sent.
    if (reply.sent) return reply;
    response.headers.forEach((value, name) => {
      if (name !== 'content-length') void reply.header(name, value);
    });
    const text = await response.text();
    // Any status the transport chose (the declared ones are those clients should expect).
    return reply.code(response.status).send(text === '' ? undefined : text);
  } finally {
    await server.close();
  }
}

/** The headers the SDK transport reads, on a web Request (the body is handed over already parsed). */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}
