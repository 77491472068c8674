import { Type } from 'typebox';
import type { ApiApp, RoutePlugin } from '../api-app.ts';
import { createAgentInvoker } from '../invocation/agent-invoker.ts';
import { jsonRpcError, sendRefusal, type McpBody } from './json-rpc-error.ts';

const TAGS = ['mcp'];
const JsonRpcReply = Type.Unknown({ description: 'A JSON-RPC 2.0 response (application/json).' });
const JsonRpcErrorReply = Type.Unknown({
  description: 'A JSON-RPC 2.0 error response: `{jsonrpc, id, error: {code, message, data?}}`.',
});
const RESPONSES = {
  200: JsonRpcReply,
  202: Type.Unknown({ description: 'Accepted: the message was a notification or a response.' }),
  400: JsonRpcErrorReply,
  406: JsonRpcErrorReply,
  415: JsonRpcErrorReply,
};

/**
 * The MCP surface (`[surfaces] mcp = true`, spec "Rules of the model" 2, docs/mcp.md): streamable
 * HTTP at /mcp on the api listener, behind the same hooks as every route (CORS, IP allowlist,
 * cross-site, authentication with its lockout and audit, body limit, request timeout). Not
 * registered at all when the surface is off, so /mcp is then an unknown path (404 after
 * authentication); surfaces are read at boot (changing them takes a restart).
 *
 * Stateless: no session id is issued, each POST carries one self-contained JSON-RPC message and
 * is answered with JSON, so any api node of a fleet serves any request and there is no session
 * state to share. GET (the server-to-client SSE stream) and DELETE (ending a session) are 405,
 * as the MCP transport allows for a server without them.
 *
 * The route itself is never audited by the audit hook (`audit: false`): an assistant's
 * initialize and tools/list would fill the trail. Tool calls are audited one by one instead,
 * like the routes they mirror (tool-call.ts).
 */
export const mcpRoutes: RoutePlugin = (app, deps) => {
  if (!deps.config.current().surfaces.mcp) return;
  installMcpBodyParser(app);
  const invoker = createAgentInvoker(deps);
  const config = { action: 'authenticated', audit: false } as const;

  app.post(
    '/mcp',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'MCP streamable HTTP: one JSON-RPC message per POST (stateless)',
        response: RESPONSES,
      },
    },
    async (request, reply) => {
      // The MCP SDK and its schemas (several MB of heap) are loaded by the first POST, not at
      // boot (docs/performance.md "Memory").
      const { answerMcpPost } = await import('./mcp-post.ts');
      return answerMcpPost(request, reply, { deps, invoker });
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      config,
      schema: {
        tags: TAGS,
        summary: method === 'GET' ? 'No server-to-client stream: 405' : 'No sessions to end: 405',
        response: { 405: JsonRpcErrorReply },
      },
      handler: async (_request, reply) => {
        const why =
          method === 'GET' ? 'this server opens no SSE stream' : 'this server keeps no sessions to end';
        void reply.header('allow', 'POST');
        return sendRefusal(
          reply,
          jsonRpcError(
            405,
            null,
            -32000,
            `Method Not Allowed: ${why} (stateless streamable HTTP; POST one message per request)`,
          ),
        );
      },
    });
  }
};


const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * In this route's scope only, the body is never refused by the parser: a wrong content type or
 * bad JSON is recorded and answered by checkMcpPost in JSON-RPC's terms (the api's parsers answer
 * 415/422 with the platform envelope, which an MCP client cannot read). The JSON is parsed with
 * Fastify's prototype-poisoning-safe parser, as everywhere else.
 */
function installMcpBodyParser(app: ApiApp): void {
  const safeJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    const contentType = request.headers['content-type'] ?? '';
    if (!JSON_TYPE.test(contentType))
      return done(null, { kind: 'unsupported', contentType } satisfies McpBody);
    if (text.trim() === '') return done(null, undefined);
    void safeJson(request, text, (error: Error | null, value?: unknown) => {
      done(
        null,
        error === null
          ? ({ kind: 'json', value } satisfies McpBody)
          : ({ kind: 'invalid_json', reason: error.message } satisfies McpBody),
      );
    });
  });
}
