#!/usr/bin/env node
// A stand-in for a carrier's claims system of record behind an MCP server (official SDK), for the
// README example and the tests. Not part of the integration package: the carrier's IT runs it.
//
//   node examples/claims-system/server.mjs [--port 4310] [--ledger <file>]   streamable HTTP at /mcp
//   node examples/claims-system/server.mjs --stdio [--ledger <file>]         over stdio
//
// Tools: get_policy (read-only) and create_claim (changes the system of record). Every claim
// opened is appended to the ledger (JSON lines; default ./claims-ledger.jsonl) with the
// idempotency key the platform sent in `_meta`; a repeat of a key returns the claim already
// opened instead of opening another. Over HTTP, GET /claims lists the ledger.
// CLAIMS_CREATE_DELAY_MS delays create_claim's answer after the claim is recorded (tests use it to
// kill a worker while the call is in flight); over HTTP, POST /control {"create_delay_ms": n} changes
// it while the server runs. With --calls <file> (or CLAIMS_CALLS), every
// create_claim request is also appended there as it arrives, with its key, before anything else is
// done: the count of calls per key that the platform's tool-call journal is judged by.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const ledger = arg('--ledger', process.env.CLAIMS_LEDGER ?? 'claims-ledger.jsonl');
const callsLog = arg('--calls', process.env.CLAIMS_CALLS);
let createDelayMs = Number(process.env.CLAIMS_CREATE_DELAY_MS ?? 0);
const KEY = 'agent-platform/idempotency_key';

const POLICIES = {
  'HO-1234': { policy_no: 'HO-1234', holder_name: 'Ada Lovelace', product: 'Homeowners', status: 'active', deductible_usd: 500 },
  'AU-5678': { policy_no: 'AU-5678', holder_name: 'Alan Turing', product: 'Auto', status: 'active', deductible_usd: 250 },
  'HO-9999': { policy_no: 'HO-9999', holder_name: 'Grace Hopper', product: 'Homeowners', status: 'lapsed', deductible_usd: 1000 },
};

const TOOLS = [
  {
    name: 'get_policy',
    description: 'Returns a policy by number.',
    inputSchema: { type: 'object', properties: { policy_no: { type: 'string' } }, required: ['policy_no'], additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'create_claim',
    description: 'Opens a claim against a policy.',
    inputSchema: {
      type: 'object',
      properties: { policy_no: { type: 'string' }, loss_description: { type: 'string' } },
      required: ['policy_no', 'loss_description'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, idempotentHint: true },
  },
];

function claims() {
  if (!existsSync(ledger)) return [];
  return readFileSync(ledger, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

const json = (value, isError = false) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], ...(isError ? { isError: true } : {}) });

async function createClaim(args, key) {
  const policy = POLICIES[String(args.policy_no)];
  if (policy === undefined) return json({ error: `no policy ${args.policy_no}` }, true);
  if (policy.status !== 'active') return json({ error: `policy ${policy.policy_no} is ${policy.status}` }, true);
  const existing = typeof key === 'string' ? claims().find((c) => c.idempotency_key === key) : undefined;
  if (existing !== undefined) return json({ ...existing, repeated: true });
  const claim = {
    claim_no: `CL-${String(claims().length + 1).padStart(4, '0')}`,
    policy_no: policy.policy_no,
    loss_description: String(args.loss_description ?? ''),
    status: 'open',
    idempotency_key: typeof key === 'string' ? key : null,
    opened_at: new Date().toISOString(),
  };
  appendFileSync(ledger, `${JSON.stringify(claim)}\n`);
  if (createDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, createDelayMs));
  return json(claim);
}

function buildServer() {
  const server = new Server({ name: 'claims-system', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    if (request.params.name === 'get_policy') {
      const policy = POLICIES[String(args.policy_no)];
      return policy === undefined ? json({ error: `no policy ${args.policy_no}` }, true) : json(policy);
    }
    if (request.params.name === 'create_claim') {
      const key = request.params._meta?.[KEY];
      if (callsLog !== undefined) appendFileSync(callsLog, `${JSON.stringify({ tool: 'create_claim', idempotency_key: key ?? null, at: new Date().toISOString() })}\n`);
      return createClaim(args, key);
    }
    return json({ error: `unknown tool ${request.params.name}` }, true);
  });
  return server;
}

if (process.argv.includes('--stdio')) {
  process.stdin.on('end', () => process.exit(0));
  await buildServer().connect(new StdioServerTransport());
} else {
  const http = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/claims') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ claims: claims() }));
      return;
    }
    if (req.method === 'POST' && req.url === '/control') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const delay = Number(JSON.parse(body || '{}').create_delay_ms);
        if (Number.isFinite(delay) && delay >= 0) createDelayMs = delay;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ create_delay_ms: createDelayMs }));
      });
      return;
    }
    // Stateless streamable HTTP: one server and transport per request.
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  http.listen(Number(arg('--port', '4310')), '127.0.0.1', () => {
    process.stdout.write(`claims-system MCP server on http://127.0.0.1:${http.address().port}/mcp (ledger ${ledger})\n`);
  });
}
