#!/usr/bin/env node
// An MCP client of the platform's /mcp (docs/mcp.md), written with the official SDK
// (@modelcontextprotocol/sdk, already installed by `npm install`): it lists the five tools and
// calls each once, as an assistant would. From the repository root, with `[surfaces] mcp = true`
// and examples/claims-review installed:
//
//   AP_MCP_KEY=svc_sk_... node examples/mcp-client.mjs http://127.0.0.1:4200/mcp
//
// AP_MCP_KEY is an API key; every tool runs with its role. A `service` key talks to agents and
// runs workflows but may not read the audit trail, so its search_audit call is refused, which the
// script prints as such. The README's "The dashboard and the MCP server" runs it
// (tests/e2e/readme-surfaces.test.ts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:4200/mcp');
const key = process.env.AP_MCP_KEY;
if (!key) {
  console.error('Set AP_MCP_KEY to an API key of the platform (svc_sk_...).');
  process.exit(2);
}

const client = new Client({ name: 'agent-platform-example', version: '1.0.0' });
try {
  // Stateless streamable HTTP: the bearer goes with every request, initialize included.
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
  );
} catch (error) {
  // A wrong key is the platform's 401, a surface that is off its 404.
  console.error(`Could not connect to ${url}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const server = client.getServerVersion();
console.log(`connected to ${server?.name} ${server?.version} at ${url}`);

const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);

/** Calls a tool: its structured result, or null once a refusal is printed. */
async function call(name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError) return result.structuredContent;
  // A tool error's text is JSON: the flat role refusal {error, message}, or the spec's envelope.
  const body = JSON.parse(result.content[0].text);
  const why = typeof body.error === 'string' ? body.message : `${body.error.category}: ${body.error.message}`;
  console.log(`${name}: refused: ${why}`);
  return null;
}

const listed = await call('list_agents', {});
if (listed) console.log(`list_agents: ${listed.agents.map((a) => `${a.name} (${a.state})`).join(', ')}`);

const reply = await call('send_message', {
  agent: 'claims-intake',
  message: 'A tree fell on my car, policy AU-5678',
});
if (reply)
  console.log(`send_message to ${reply.agent_name}: "${reply.content}" (${reply.tokens_used} tokens)`);

// wait_secs: the call returns once the run has ended (or the bound passed, still Running).
const started = await call('run_workflow', {
  workflow: 'claims-review',
  input: 'Hail dented the roof of the garage, policy HO-1234',
  wait_secs: 60,
});
if (started) {
  console.log(`run_workflow claims-review: run ${started.id} ${started.state}`);
  const run = await call('get_run', { run_id: started.id });
  if (run)
    console.log(
      `get_run ${run.id}: ${run.state}, steps ${run.step_results.map((s) => s.step_name).join(', ')}`,
    );
}

const audit = await call('search_audit', { limit: 5 });
if (audit)
  console.log(`search_audit: ${audit.entries.map((e) => `#${e.seq} ${e.identity} ${e.action}`).join('; ')}`);

await client.close();
