import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '@agent-platform/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeldModel, type HeldModel } from '../testing/held-model.ts';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
type Json = any;

// The MCP surface as an assistant uses it (docs/mcp.md): the official SDK client over streamable
// HTTP against the all-in-one (api + agent worker in one process), the claims-review example
// installed (its agents answer through the built-in local echo model, DECISIONS D6).
const EXAMPLE = fileURLToPath(new URL('../../../../examples/claims-review', import.meta.url));

let api: PlatformTestApi;
let admin: string;
const clients: Client[] = [];

async function connect(token?: string, target: PlatformTestApi = api): Promise<Client> {
  const client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', target.url), { requestInit: { headers } }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A successful result: its structured content, which the client validated against the output schema. */
function ok(result: CallToolResult): Json {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as Json;
}

function errorOf(result: CallToolResult): Json {
  expect(result.isError).toBe(true);
  return JSON.parse((result.content[0] as { text: string }).text);
}

/** D6: ceil(len(input)/4) + ceil(len(output)/4), the echo being the input. */
const echoTokens = (text: string): number => 2 * Math.ceil([...text].length / 4);

beforeAll(async () => {
  api = await startPlatformTestApi({ config: { auth: { mode: 'local' }, surfaces: { mcp: true } } });
  admin = await api.issueKey('admin', 'assistant-admin');
  const installed = await api.request('POST', '/catalog/install', {
    token: admin,
    body: { path: EXAMPLE, activate: true },
  });
  expect(installed.status).toBe(201);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await api?.close();
});

describe('the five tools through the official SDK client', () => {
  it('lists them with their input and output schemas', async () => {
    const client = await connect(admin);
    expect(client.getServerVersion()).toMatchObject({ name: 'agent-platform', version: api.deps.version });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'list_agents',
      'send_message',
      'run_workflow',
      'get_run',
      'search_audit',
    ]);
    const send = tools.find((t) => t.name === 'send_message')!;
    expect(send.inputSchema).toMatchObject({
      type: 'object',
      required: ['agent', 'message'],
      additionalProperties: false,
    });
    expect(Object.keys(send.outputSchema?.properties ?? {})).toEqual([
      'agent_id',
      'agent_name',
      'content',
      'tool_calls',
      'tokens_used',
    ]);
    expect(send.annotations).toMatchObject({ readOnlyHint: false });
    expect(tools.find((t) => t.name === 'get_run')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('list_agents answers what GET /agents answers, and filters by state', async () => {
    const client = await connect(admin);
    const listed = ok(await call(client, 'list_agents', {}));
    expect(listed).toEqual((await api.request('GET', '/agents', { token: admin })).body);
    expect(listed.agents.map((a: { name: string }) => a.name)).toEqual(['claims-intake', 'policy-servicing']);
    expect(ok(await call(client, 'list_agents', { state: 'Suspended' }))).toEqual({ agents: [] });
  });

  it('send_message answers through the agent worker, by name or id, and is audited like POST /agents/{id}/send', async () => {
    const client = await connect(admin);
    const message = 'A tree fell on my garage last night.';
    const byName = ok(await call(client, 'send_message', { agent: 'claims-intake', message }));
    expect(byName).toMatchObject({
      agent_name: 'claims-intake',
      content: message,
      tool_calls: [],
      tokens_used: echoTokens(message),
    });
    const byId = ok(await call(client, 'send_message', { agent: byName.agent_id, message: 'second' }));
    expect(byId).toMatchObject({ agent_id: byName.agent_id, content: 'second' });
    expect((await api.deps.agentStats.read(byName.agent_id)).tasks_completed).toBe(2);

    const [entry] = await api.deps.audit.query({ limit: 1, category: 'request' });
    expect(entry).toMatchObject({
      identity: 'assistant-admin',
      role: 'admin',
      action: 'MCP send_message',
      target: `/agents/${byName.agent_id}/send`,
      result: '200',
      metadata: { tool: 'send_message', agent_id: byName.agent_id },
    });
  });

  it('answers arguments that do not fit as a tool error naming the argument, so the caller can correct itself; an unknown tool stays a protocol error', async () => {
    const client = await connect(admin);
    const missing = errorOf(await call(client, 'send_message', { agent: 'claims-intake', text: 'A hailstorm' }));
    expect(missing.error).toMatchObject({ category: 'ValidationError', details: { field: 'message' } });
    expect(missing.error.message).toBe("invalid arguments for send_message: missing required field 'message'");
    const unknown = errorOf(await call(client, 'send_message', { agent: 'claims-intake', message: 'A hailstorm', urgent: true }));
    expect(unknown.error.message).toBe("invalid arguments for send_message: unknown field 'urgent'");
    // What a model does next: the same call with the argument the error named.
    expect(ok(await call(client, 'send_message', { agent: 'claims-intake', message: 'A hailstorm' })).content).toBe('A hailstorm');
    await expect(call(client, 'delete_everything', {})).rejects.toMatchObject({ code: -32602 });
  });

  it('send_message to a Suspended agent is a tool error with the InvalidState envelope, and nothing is invoked', async () => {
    const client = await connect(admin);
    const agent = (await api.deps.agents.getByName('policy-servicing'))!;
    expect((await api.request('POST', `/agents/${agent.id}/suspend`, { token: admin })).status).toBe(200);
    try {
      const before = await api.deps.agentStats.read(agent.id);
      const error = errorOf(
        await call(client, 'send_message', { agent: 'policy-servicing', message: 'hello?' }),
      );
      expect(error.error).toMatchObject({ category: 'InvalidState', details: { state: 'Suspended' } });
      expect(await api.deps.agentStats.read(agent.id)).toEqual(before);
    } finally {
      expect((await api.request('POST', `/agents/${agent.id}/activate`, { token: admin })).status).toBe(200);
    }
  });

  it('run_workflow with wait_secs answers the finished run; get_run answers what GET /runs/{id} answers', async () => {
    const client = await connect(admin);
    const run = ok(
      await call(client, 'run_workflow', {
        workflow: 'claims-review',
        input: 'Hail damage to the roof',
        wait_secs: 60,
      }),
    );
    expect(run).toMatchObject({
      workflow_name: 'claims-review',
      input: 'Hail damage to the roof',
      state: 'Completed',
      error: null,
    });
    expect(run.output).toContain('Recommend the next action for claim');
    expect(run.step_results.map((s: { step_name: string }) => s.step_name)).toEqual(
      expect.arrayContaining(['summarise', 'coverage-check', 'fraud-screen', 'recommend']),
    );

    const fetched = ok(await call(client, 'get_run', { run_id: run.id }));
    expect(fetched).toEqual((await api.request('GET', `/runs/${run.id}`, { token: admin })).body);
    expect(fetched).toEqual(run);

    const [entry] = await api.deps.audit.query({ limit: 1, category: 'workflows' });
    expect(entry).toMatchObject({
      action: 'MCP run_workflow',
      target: `/workflows/${run.workflow_id}/run`,
      result: '201',
      metadata: { run_id: run.id },
    });
  });

  it('run_workflow without a wait answers the run at once; polling get_run sees it end', async () => {
    const client = await connect(admin);
    const workflowId = (await api.request('GET', '/workflows', { token: admin })).body.workflows[0]
      .id as string;
    const started = ok(
      await call(client, 'run_workflow', { workflow: workflowId, input: 'Burst pipe in the kitchen' }),
    );
    expect(['Pending', 'Running']).toContain(started.state);
    await waitUntil(
      async () => ok(await call(client, 'get_run', { run_id: started.id })).state === 'Completed',
      { message: 'the run to complete' },
    );
  });

  it('run_workflow with an idempotency_key starts one run for repeats', async () => {
    const client = await connect(admin);
    const args = { workflow: 'claims-review', input: 'Flooded basement', idempotency_key: 'assistant-42' };
    const first = ok(await call(client, 'run_workflow', args));
    const again = ok(await call(client, 'run_workflow', args));
    expect(again.id).toBe(first.id);
    const [entry] = await api.deps.audit.query({ limit: 1, category: 'workflows' });
    expect(entry?.metadata).toMatchObject({ run_id: first.id, replayed: true });
  });

  it('run_workflow with a business_key stores it on the run and in the audit entry, as the HTTP route does', async () => {
    const client = await connect(admin);
    const run = ok(
      await call(client, 'run_workflow', {
        workflow: 'claims-review',
        input: 'Windscreen chipped',
        business_key: 'CLM-2026-000123',
      }),
    );
    expect(run.business_key).toBe('CLM-2026-000123');
    const fetched = (await api.request('GET', `/runs/${run.id}`, { token: admin })).body;
    expect(fetched.business_key).toBe('CLM-2026-000123');
    const [entry] = await api.deps.audit.query({ limit: 1, category: 'workflows' });
    expect(entry?.metadata).toMatchObject({ run_id: run.id, business_key: 'CLM-2026-000123' });
  });

  it('search_audit finds the calls above, filtered like GET /security/audit', async () => {
    const client = await connect(admin);
    const found = ok(await call(client, 'search_audit', { actor: 'assistant-admin', limit: 50 }));
    const actions = (found.entries as Array<{ action: string }>).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['MCP send_message', 'MCP run_workflow']));
    // Reads are not audited, as GETs are not.
    expect(actions.filter((a) => /list_agents|get_run|search_audit/.test(a))).toEqual([]);
    const workflows = ok(await call(client, 'search_audit', { category: 'workflows', limit: 2 }));
    expect(workflows.entries).toEqual(
      (await api.request('GET', '/security/audit?category=workflows&limit=2', { token: admin })).body.entries,
    );
  });
});

describe('roles: the same permission matrix as the routes', () => {
  it('refuses a viewer send_message and run_workflow, and lets it list agents and read runs', async () => {
    const viewer = await connect(await api.issueKey('viewer', 'assistant-viewer'));
    const runsBefore = (await api.deps.workflows.runs({ limit: 1000 })).length;
    expect(errorOf(await call(viewer, 'send_message', { agent: 'claims-intake', message: 'hi' }))).toEqual({
      error: 'forbidden',
      message: 'role viewer may not perform AgentSendMessage',
    });
    expect(errorOf(await call(viewer, 'run_workflow', { workflow: 'claims-review', input: 'x' }))).toEqual({
      error: 'forbidden',
      message: 'role viewer may not perform WorkflowRun',
    });
    expect(errorOf(await call(viewer, 'search_audit', {})).message).toBe(
      'role viewer may not perform SecurityAudit',
    );
    expect((await api.deps.workflows.runs({ limit: 1000 })).length).toBe(runsBefore);
    expect(ok(await call(viewer, 'list_agents', {})).agents).toHaveLength(2);
    const [run] = await api.deps.workflows.runs({ limit: 1 });
    expect(ok(await call(viewer, 'get_run', { run_id: run!.id })).id).toBe(run!.id);
  });

  it('lets an auditor search the audit trail (finding the refusals) but not send messages', async () => {
    const auditor = await connect(await api.issueKey('auditor', 'assistant-auditor'));
    const denials = ok(
      await call(auditor, 'search_audit', { category: 'access', actor: 'assistant-viewer' }),
    );
    expect(
      (denials.entries as Array<{ action: string; result: string }>).map((e) => `${e.action} ${e.result}`),
    ).toEqual(['MCP search_audit 403', 'MCP run_workflow 403', 'MCP send_message 403']);
    expect(
      errorOf(await call(auditor, 'send_message', { agent: 'claims-intake', message: 'hi' })).error,
    ).toBe('forbidden');
  });

  it('lets a service key send messages and run workflows, not search the audit trail', async () => {
    const service = await connect(await api.issueKey('service', 'assistant-service'));
    expect(
      ok(await call(service, 'send_message', { agent: 'claims-intake', message: 'from a service' })).content,
    ).toBe('from a service');
    expect(
      ok(await call(service, 'run_workflow', { workflow: 'claims-review', input: 'x', wait_secs: 30 })).state,
    ).toBe('Completed');
    expect(errorOf(await call(service, 'search_audit', {})).message).toBe(
      'role service may not perform SecurityAudit',
    );
  });

  it('refuses a client without a token, or with a bad one, with 401 before initialize', async () => {
    await expect(connect()).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('authentication required'),
    });
    await expect(connect('svc_sk_not-a-key')).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('invalid, revoked or expired API key'),
    });
  });
});

describe('limits: the request timeout, a client that goes away', () => {
  let held: HeldModel;
  let slow: PlatformTestApi;
  let key: string;

  beforeAll(async () => {
    held = await startHeldModel({ holds: (text) => text.includes('slow') });
    slow = await startPlatformTestApi({
      config: {
        ...held.config,
        auth: { mode: 'local' },
        surfaces: { mcp: true },
        server: { request_timeout_secs: 4 },
      },
    });
    key = await slow.issueKey('admin', 'slow-admin');
    expect(
      (
        await slow.request('POST', '/catalog/install', {
          token: key,
          body: { path: EXAMPLE, activate: true },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => {
    // Released first: the held calls finish, so the platform stops without waiting on them.
    held?.release();
    await slow?.close();
    await held?.close();
  });

  it('ends a run_workflow wait before the request timeout and answers the run still going, not 408', async () => {
    const client = await connect(key, slow);
    const started = Date.now();
    const run = ok(
      await call(client, 'run_workflow', {
        workflow: 'claims-review',
        input: 'slow: a long review',
        wait_secs: 60,
      }),
    );
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(run.state).toBe('Running');
  });

  it("cuts a tool call off with the listener's 408 once request_timeout_secs pass", async () => {
    const client = await connect(key, slow);
    await expect(
      call(client, 'send_message', { agent: 'claims-intake', message: 'slow: never answered in time' }),
    ).rejects.toMatchObject({
      code: 408,
      message: expect.stringContaining('Timeout'),
    });
  });

  it('cancels the invocation on its worker when the client closes the connection', async () => {
    const before = held.server.requests.length;
    const payload = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'send_message', arguments: { agent: 'policy-servicing', message: 'slow: cancel me' } },
    });
    const url = new URL(slow.url);
    const req = httpRequest({
      hostname: url.hostname,
      port: url.port,
      path: '/mcp',
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': Buffer.byteLength(payload),
      },
    });
    req.on('error', () => undefined);
    req.end(payload);
    const mine = () =>
      held.server.requests
        .slice(before)
        .find((r) => JSON.stringify(r.body?.messages?.at(-1) ?? '').includes('slow: cancel me'));
    await waitUntil(() => mine() !== undefined, { message: 'the call reaching the model' });
    req.destroy();
    await waitUntil(() => mine()!.cancelled, { timeoutMs: 3_000, message: 'the model call to be cancelled' });
  });
});
