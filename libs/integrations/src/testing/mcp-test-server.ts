/**
 * A real MCP server built with the official SDK, for the integration tests (run as a child
 * process: `node --import tsx mcp-test-server.ts [--http <port>]`). Over stdio by default, or
 * streamable HTTP (stateless) with `--http`; it then prints `MCP_HTTP_PORT=<port>`.
 *
 * Tools: `echo` (read-only), `count` (state-changing: counts its calls, appends one line per call
 * to $COUNT_FILE when set, shows the idempotency key it got), `hang` (never answers), `exit`
 * (the process exits mid-call), `fail` (an isError result), `env` (the value of one variable),
 * `whoami` (the Authorization header an HTTP call carried).
 */
import { appendFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';

const OBJECT = { type: 'object', properties: {} } as const;
const TOOLS = [
  {
    name: 'echo',
    description: 'Answers with the message.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'count',
    description: 'Counts its calls (changes state).',
    inputSchema: OBJECT,
    annotations: { readOnlyHint: false },
  },
  { name: 'hang', description: 'Never answers.', inputSchema: OBJECT },
  { name: 'exit', description: 'Exits the server process mid-call.', inputSchema: OBJECT },
  {
    name: 'fail',
    description: 'Fails on purpose.',
    inputSchema: OBJECT,
    annotations: { readOnlyHint: true },
  },
  {
    name: 'env',
    description: 'The value of one environment variable.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'whoami',
    description: 'The Authorization header of the HTTP request.',
    inputSchema: OBJECT,
    annotations: { readOnlyHint: true },
  },
];

let calls = 0;
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

function buildServer(): Server {
  const server = new Server(
    { name: 'agent-platform-test-server', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'echo':
        return text(String(args.message));
      case 'count': {
        calls += 1;
        const key = request.params._meta?.['agent-platform/idempotency_key'];
        const line = `count=${calls} key=${typeof key === 'string' ? key : 'none'} pid=${process.pid}`;
        if (process.env.COUNT_FILE) appendFileSync(process.env.COUNT_FILE, `${line}\n`);
        return text(line);
      }
      case 'hang':
        return new Promise<CallToolResult>(() => undefined);
      case 'exit':
        process.stderr.write('exiting on request of the exit tool\n');
        process.exit(3);
        break;
      case 'fail':
        return { content: [{ type: 'text', text: 'it failed on purpose' }], isError: true };
      case 'env':
        return text(process.env[String(args.name)] ?? '(unset)');
      case 'whoami':
        return text(String(extra.requestInfo?.headers.authorization ?? '(none)'));
    }
    return { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true };
  });
  return server;
}

const httpAt = process.argv.indexOf('--http');
if (httpAt >= 0) {
  const http = createHttpServer((req, res) => {
    // Stateless: one server and transport per request; the call counter is the process's.
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  http.listen(Number(process.argv[httpAt + 1] ?? 0), '127.0.0.1', () => {
    const address = http.address();
    process.stdout.write(
      `MCP_HTTP_PORT=${typeof address === 'object' && address !== null ? address.port : 0}\n`,
    );
  });
} else {
  // The platform closing our stdin (or dying) ends this process: no orphan servers.
  process.stdin.on('end', () => process.exit(0));
  await buildServer().connect(new StdioServerTransport());
}
