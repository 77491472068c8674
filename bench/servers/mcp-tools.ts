import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';

// The integration of the tool-call journal targets (docs/performance.md "Tool-call journal (issue
// 20)"): a real MCP server (official SDK, streamable HTTP at /mcp, stateless as
// examples/claims-system is) with two tools that do the SAME nothing, one annotated read-only and
// one not, so that the platform's side is the only difference between a call of each. (The
// example claims system reads its whole ledger on every create_claim: its own cost would grow
// during a run and differ between the two tools.) GET /counts answers how many calls of each tool
// arrived, and how many state-changing ones carried an idempotency key.
const KEY = 'agent-platform/idempotency_key';
const ARGS = { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: true } as const;
const TOOLS = [
  {
    name: 'read_record',
    description: 'Reads a record (does nothing).',
    inputSchema: ARGS,
    annotations: { readOnlyHint: true },
  },
  {
    name: 'write_record',
    description: 'Writes a record (does nothing; the platform must treat it as state-changing).',
    inputSchema: ARGS,
    annotations: { readOnlyHint: false },
  },
];

const counts = { read_record: 0, write_record: 0, write_record_keyed: 0 };

function buildServer(): Server {
  const server = new Server({ name: 'bench-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => {
    const tool = request.params.name;
    if (tool !== 'read_record' && tool !== 'write_record')
      return { content: [{ type: 'text', text: `unknown tool ${tool}` }], isError: true };
    counts[tool] += 1;
    if (tool === 'write_record' && typeof request.params._meta?.[KEY] === 'string')
      counts.write_record_keyed += 1;
    // The same answer for both tools: the same bytes back through the platform.
    return { content: [{ type: 'text', text: '{"ok":true}' }] };
  });
  return server;
}

const http = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/counts') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
    return;
  }
  // Stateless streamable HTTP: one server and transport per request.
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => server.close()));
  void server.connect(transport).then(() => transport.handleRequest(req, res));
});
http.listen(0, '127.0.0.1', () => {
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  console.log(`bench MCP tools listening on http://127.0.0.1:${port}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    http.closeAllConnections();
    http.close(() => process.exit(0));
  });
}
