import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../http/route-catalog.ts';
import { startTestApi, type TestApi, type TestResponse } from '../testing/index.ts';

// The MCP surface over raw HTTP (docs/mcp.md): off by default, authenticated like every route,
// JSON-RPC's error codes for bad input (and nothing changed), role refusals as tool errors.
// The SDK client against a platform with an agent worker: apps/platform/src/mcp/mcp-tools.test.ts.

const ACCEPT = 'application/json, text/event-stream';
const UNKNOWN_RUN = '00000000-0000-4000-8000-000000000000';

function rpc(
  api: TestApi,
  body: unknown,
  options: { token?: string; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  return api.request('POST', '/mcp', {
    ...(options.token === undefined ? {} : { token: options.token }),
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...options.headers },
  });
}

const call = (id: number, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('the surface is off by default', () => {
  it('answers /mcp 404 like any unknown path when [surfaces] mcp is absent, after authentication', async () => {
    const api = await startTestApi({ config: { auth: { mode: 'local' } } });
    try {
      const admin = await api.issueKey('admin');
      expect(api.deps.config.current().surfaces.mcp).toBe(false);
      for (const method of ['POST', 'GET', 'DELETE']) {
        const res = await api.request(method, '/mcp', { token: admin, headers: { accept: ACCEPT } });
        expect(res.status).toBe(404);
        expect(res.body.error.category).toBe('NotFound');
      }
      expect((await rpc(api, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
    } finally {
      await api.close();
    }
  });

  it('is 404 with auth disabled too', async () => {
    const api = await startTestApi();
    try {
      expect((await rpc(api, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(404);
    } finally {
      await api.close();
    }
  });
});

describe('the surface on, [auth] mode local', () => {
  let api: TestApi;
  let admin: string;
  let viewer: string;
  let auditor: string;
  const auditCount = async (): Promise<number> => (await api.deps.audit.query({ limit: 1000 })).length;

  beforeAll(async () => {
    api = await startTestApi({
      config: { auth: { mode: 'local' }, surfaces: { mcp: true }, server: { body_limit_bytes: 65536 } },
    });
    admin = await api.issueKey('admin', 'mcp-admin');
    viewer = await api.issueKey('viewer', 'mcp-viewer');
    auditor = await api.issueKey('auditor', 'mcp-auditor');
  });
  afterAll(async () => api?.close());

  it('answers 401 before anything MCP-level: no token, a bad token; the failure is audited', async () => {
    const none = await rpc(api, { jsonrpc: '2.0', id: 1, method: 'initialize' });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.body.error.category).toBe('AuthError');
    const bad = await rpc(api, 'not even json', { token: 'svc_sk_nope' });
    expect(bad.status).toBe(401);
    const [entry] = await api.deps.audit.query({ limit: 1, category: 'auth' });
    expect(entry).toMatchObject({ action: 'POST /mcp', target: '/mcp', result: 'failure' });
  });

  it('initializes statelessly (no session id) and lists the five tools with input and output schemas', async () => {
    const init = await rpc(
      api,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      },
      { token: viewer },
    );
    expect(init.status).toBe(200);
    expect(init.headers['mcp-session-id']).toBeUndefined();
    expect(init.body.result).toMatchObject({
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'agent-platform', version: api.deps.version },
      capabilities: { tools: {} },
    });

    const list = await rpc(
      api,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { token: viewer, headers: { 'mcp-protocol-version': '2025-06-18' } },
    );
    expect(list.status).toBe(200);
    const tools = list.body.result.tools as Array<{
      name: string;
      inputSchema: { type: string };
      outputSchema: { type: string };
      description: string;
    }>;
    expect(tools.map((t) => t.name)).toEqual([
      'list_agents',
      'send_message',
      'run_workflow',
      'get_run',
      'search_audit',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema.type).toBe('object');
    }
    expect(tools[1]!.description).toContain('Needs the AgentSendMessage permission');
  });

  it.each([
    ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700, null],
    ['an empty body', '', 400, -32700, null],
    ['a JSON-RPC 1.0 message', { jsonrpc: '1.0', id: 7, method: 'ping' }, 400, -32600, 7],
    ['no jsonrpc member', { id: 8, method: 'ping' }, 400, -32600, 8],
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], 400, -32600, null],
    ['a bare number', 42, 400, -32600, null],
    ['a method that is not a string', { jsonrpc: '2.0', id: 9, method: 5 }, 400, -32600, 9],
    ['an object id', { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, 400, -32600, null],
    ['neither request nor response', { jsonrpc: '2.0', id: 10 }, 400, -32600, 10],
    ['an unknown method', { jsonrpc: '2.0', id: 11, method: 'resources/list' }, 200, -32601, 11],
    [
      'tools/call params of the wrong shape',
      { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 5 } },
      200,
      -32602,
      12,
    ],
    ['tools/call without params', { jsonrpc: '2.0', id: 13, method: 'tools/call' }, 200, -32602, 13],
    ['an unknown tool', call(14, 'delete_everything', {}), 200, -32602, 14],
  ])('answers %s with its JSON-RPC error code and changes nothing', async (_what, body, status, code, id) => {
    const before = await auditCount();
    const res = await rpc(api, body, { token: admin });
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(await auditCount()).toBe(before);
    expect(await api.deps.workflows.runs({ limit: 10 })).toEqual([]);
  });

  // MCP 2025-11-25 ("Tools", error handling): arguments that do not fit the input schema are a
  // tool error the model can read and correct, not a protocol error.
  it.each([
    ['send_message without its message', call(15, 'send_message', { agent: 'claims-intake' }), 'ValidationError', 'message'],
    ['send_message with an unknown argument', call(16, 'send_message', { agent: 'a', message: 'm', urgent: true }), 'ValidationError', 'urgent'],
    ['send_message with a message of the wrong type', call(17, 'send_message', { agent: 'a', message: 5 }), 'MalformedBody', 'message'],
    ['run_workflow waiting too long', call(18, 'run_workflow', { workflow: 'w', input: 'i', wait_secs: 301 }), 'ValidationError', 'wait_secs'],
    ['run_workflow with a business_key holding a control character', call(21, 'run_workflow', { workflow: 'w', input: 'i', business_key: 'CLM\n1' }), 'ValidationError', 'business_key'],
    ['get_run with a malformed id', call(19, 'get_run', { run_id: 'run-1' }), 'ValidationError', 'run_id'],
    ['search_audit with an unknown category', call(20, 'search_audit', { category: 'gossip' }), 'ValidationError', 'category'],
  ])('answers %s with a tool error naming the argument, and changes nothing', async (_what, body, category, field) => {
    const before = await auditCount();
    const res = await rpc(api, body, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeUndefined();
    expect(res.body.result.isError).toBe(true);
    expect(res.body.result.structuredContent).toBeUndefined();
    const envelope = JSON.parse(res.body.result.content[0].text);
    expect(envelope.error).toMatchObject({ category, details: { field } });
    expect(envelope.error.message).toContain(field);
    expect(await auditCount()).toBe(before);
    expect(await api.deps.workflows.runs({ limit: 10 })).toEqual([]);
  });

  it('names the bad argument, and lists the tools for an unknown one', async () => {
    const missing = await rpc(api, call(1, 'send_message', { agent: 'claims-intake' }), { token: admin });
    expect(JSON.parse(missing.body.result.content[0].text).error.message).toBe(
      "invalid arguments for send_message: missing required field 'message'",
    );
    const unknown = await rpc(api, call(2, 'delete_everything', {}), { token: admin });
    expect(unknown.body.error.code).toBe(-32602);
    expect(unknown.body.error.message).toContain(
      'list_agents, send_message, run_workflow, get_run, search_audit',
    );
    const category = await rpc(api, call(3, 'search_audit', { category: 'gossip' }), { token: admin });
    expect(JSON.parse(category.body.result.content[0].text).error.message).toContain('workflows');
  });

  it.each([
    ['a content type other than JSON', { 'content-type': 'text/plain' }, 415],
    ['an Accept without text/event-stream', { accept: 'application/json' }, 406],
    ['no Accept at all', { accept: '' }, 406],
  ])('refuses %s as the streamable HTTP transport requires', async (_what, headers, status) => {
    const res = await rpc(api, { jsonrpc: '2.0', id: 1, method: 'ping' }, { token: admin, headers });
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
  });

  it('answers GET and DELETE 405 (no SSE stream, no sessions), naming POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await api.request(method, '/mcp', {
        token: viewer,
        headers: { accept: 'text/event-stream' },
      });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.body.error.code).toBe(-32000);
    }
  });

  it('applies the listener body limit (413) before reading the body', async () => {
    const big = JSON.stringify(call(1, 'send_message', { agent: 'a', message: 'x'.repeat(70_000) }));
    const res = await rpc(api, big, { token: admin });
    expect(res.status).toBe(413);
    expect(res.body.error.category).toBe('SizeLimitExceeded');
  });

  it('declares its routes like every route, is in the OpenAPI document, and keeps its body parsing to itself', async () => {
    const routes = registeredRoutes(api.app).filter((r) => r.url === '/mcp');
    expect(routes.map((r) => r.method).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'POST']);
    expect(routes.every((r) => r.action === 'authenticated' && r.hasResponseSchema)).toBe(true);
    expect(Object.keys((await api.request('GET', '/openapi.json', { token: viewer })).body.paths)).toContain(
      '/mcp',
    );
    // Other routes still answer a wrong content type and bad JSON in the platform's envelope.
    const wrongType = await api.request('POST', '/auth/keys', {
      token: admin,
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(wrongType.status).toBe(415);
    const badJson = await api.request('POST', '/auth/keys', {
      token: admin,
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(422);
  });

  it('answers a notification 202 with no body', async () => {
    const res = await rpc(api, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token: viewer });
    expect(res.status).toBe(202);
    expect(res.body).toBe('');
  });

  describe('roles: the permission matrix per tool, before the arguments', () => {
    it.each([
      ['send_message', { agent: 'claims-intake', message: 'hi' }, 'AgentSendMessage'],
      ['run_workflow', { workflow: 'claims-review', input: 'x' }, 'WorkflowRun'],
      ['search_audit', {}, 'SecurityAudit'],
      // An unauthorized caller learns nothing about its arguments (403 before 400/422 over HTTP).
      ['send_message', { nonsense: true }, 'AgentSendMessage'],
    ])(
      'refuses a viewer %s with a tool error naming the role and action, audited as access',
      async (tool, args, action) => {
        const res = await rpc(api, call(5, tool, args), { token: viewer });
        expect(res.status).toBe(200);
        expect(res.body.result.isError).toBe(true);
        expect(res.body.result.structuredContent).toBeUndefined();
        expect(JSON.parse(res.body.result.content[0].text)).toEqual({
          error: 'forbidden',
          message: `role viewer may not perform ${action}`,
        });
        const [entry] = await api.deps.audit.query({ limit: 1, category: 'access' });
        expect(entry).toMatchObject({
          identity: 'mcp-viewer',
          role: 'viewer',
          action: `MCP ${tool}`,
          target: '/mcp',
          result: '403',
          metadata: { tool },
        });
      },
    );

    it('lets a viewer list agents (nothing installed here) and read a run, and an auditor search the audit trail', async () => {
      const agents = await rpc(api, call(1, 'list_agents', {}), { token: viewer });
      expect(agents.body.result).toMatchObject({ structuredContent: { agents: [] } });
      expect(agents.body.result.isError).toBeUndefined();
      const search = await rpc(
        api,
        call(2, 'search_audit', { category: 'access', actor: 'mcp-viewer', limit: 3 }),
        { token: auditor },
      );
      const entries = search.body.result.structuredContent.entries as Array<{
        action: string;
        identity: string;
      }>;
      expect(entries).toHaveLength(3);
      expect(entries.every((e) => e.identity === 'mcp-viewer' && e.action.startsWith('MCP '))).toBe(true);
      expect(JSON.parse(search.body.result.content[0].text)).toEqual(search.body.result.structuredContent);
    });

    it('passes domain errors through in the spec envelope as tool errors, audited with the route status', async () => {
      const run = await rpc(api, call(1, 'get_run', { run_id: UNKNOWN_RUN }), { token: viewer });
      expect(run.body.result.isError).toBe(true);
      expect(JSON.parse(run.body.result.content[0].text)).toMatchObject({
        error: { category: 'NotFound', message: expect.stringContaining(UNKNOWN_RUN) },
      });

      const send = await rpc(api, call(2, 'send_message', { agent: 'nobody', message: 'hi' }), {
        token: admin,
      });
      expect(JSON.parse(send.body.result.content[0].text)).toMatchObject({ error: { category: 'NotFound' } });
      const [entry] = await api.deps.audit.query({ limit: 1, category: 'request' });
      expect(entry).toMatchObject({
        identity: 'mcp-admin',
        action: 'MCP send_message',
        result: '404',
        metadata: { tool: 'send_message', error_category: 'NotFound' },
      });

      const limit = await rpc(api, call(3, 'search_audit', { limit: 100_000 }), { token: auditor });
      expect(JSON.parse(limit.body.result.content[0].text).error).toMatchObject({
        category: 'ValidationError',
        message: expect.stringContaining('max_query_limit'),
      });
    });
  });
});
