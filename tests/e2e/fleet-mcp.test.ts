import { fileURLToPath } from 'node:url';
import { requireBinary } from '@agent-platform/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
type Json = any;

// The MCP surface in a fleet (docs/mcp.md "Transport and sessions"): two api nodes with
// `[surfaces] mcp = true`, one agent worker, NATS and Redis. One official SDK client whose
// requests go round-robin to both nodes (its fetch plays the load balancer) uses all five tools;
// then an api node is killed with SIGKILL between calls and the same client goes on against the
// other node. Stateless streamable HTTP keeps no session on any node, so nothing is lost.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const EXAMPLE = fileURLToPath(new URL('../../examples/claims-review', import.meta.url));

interface Served {
  node: number;
  method: string;
}

/**
 * A round-robin load balancer in the client's fetch: request n goes to node n mod 2, skipping a
 * node found down. A node is found down when a connection to it cannot be made, before any
 * request reached it, so sending that request to the next node is safe (as a balancer's health
 * check would); the test kills a node only between calls.
 */
function roundRobin(urls: readonly string[]): { fetch: FetchLike; served: Served[] } {
  const served: Served[] = [];
  const down = new Set<number>();
  let next = 0;
  const fetchRoundRobin: FetchLike = async (input, init) => {
    for (let attempt = 0; attempt < urls.length; attempt++) {
      const node = next++ % urls.length;
      if (down.has(node)) continue;
      const url = new URL(String(input));
      url.host = new URL(urls[node]!).host;
      // Recorded when the node is chosen: the client sends some requests concurrently.
      const body =
        typeof init?.body === 'string'
          ? (JSON.parse(init.body) as { method?: string; params?: { name?: string } })
          : {};
      const what = [init?.method ?? 'GET', body.method, body.params?.name].filter(Boolean).join(' ');
      const record = { node, method: what };
      served.push(record);
      try {
        return await fetch(url, init);
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code;
        if (code !== 'ECONNREFUSED' && code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET') throw error;
        served.splice(served.indexOf(record), 1);
        down.add(node);
      }
    }
    throw new Error('no api node is up');
  };
  return { fetch: fetchRoundRobin, served };
}

function ok(result: unknown): Json {
  const r = result as CallToolResult;
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return r.structuredContent as Json;
}

function refusal(result: unknown): unknown {
  const r = result as CallToolResult;
  expect(r.isError).toBe(true);
  return JSON.parse((r.content[0] as { text: string }).text);
}

describe.skipIf(natsBinary === null || redisBinary === null)(
  'a fleet: the MCP surface through any api node',
  () => {
    let fleet: Fleet;
    let admin: string;
    let viewer: string;
    const clients: Client[] = [];

    async function connect(token: string, fetchVia: FetchLike): Promise<Client> {
      const client = new Client({ name: 'fleet-mcp-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', fleet.urls[0]), {
        fetch: fetchVia,
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    }

    beforeAll(async () => {
      fleet = await startFleet({ apis: 2, workers: 1, schedulers: 0, config: { surfaces: { mcp: true } } });
      const [first] = fleet.urls;
      admin = (await call(first!, 'POST', '/auth/keys', { body: { name: 'fleet-assistant', role: 'admin' } }))
        .body.secret;
      viewer = (
        await call(first!, 'POST', '/auth/keys', {
          token: admin,
          body: { name: 'fleet-viewer', role: 'viewer' },
        })
      ).body.secret;
      const install = await call(first!, 'POST', '/catalog/install', {
        token: admin,
        body: { path: EXAMPLE, activate: true },
      });
      expect(install.status, install.text).toBe(201);
    }, 180_000);

    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await fleet?.close();
    });

    it('serves all five tools with requests alternating between the nodes, refuses a viewer, and goes on after a node is SIGKILLed', async () => {
      const balancer = roundRobin(fleet.urls);
      const client = await connect(admin, balancer.fetch);

      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'list_agents',
        'send_message',
        'run_workflow',
        'get_run',
        'search_audit',
      ]);
      const agents = ok(await client.callTool({ name: 'list_agents', arguments: {} })).agents as Array<{
        name: string;
        state: string;
      }>;
      expect(agents.map((a) => `${a.name} ${a.state}`)).toEqual([
        'claims-intake Running',
        'policy-servicing Running',
      ]);
      const reply = ok(
        await client.callTool({
          name: 'send_message',
          arguments: { agent: 'claims-intake', message: 'Water damage in the hallway' },
        }),
      );
      expect(reply).toMatchObject({ agent_name: 'claims-intake', content: 'Water damage in the hallway' });
      const run = ok(
        await client.callTool({
          name: 'run_workflow',
          arguments: { workflow: 'claims-review', input: 'Storm took the fence', wait_secs: 90 },
        }),
      );
      expect(run).toMatchObject({ state: 'Completed', workflow_name: 'claims-review' });
      expect(ok(await client.callTool({ name: 'get_run', arguments: { run_id: run.id } }))).toEqual(run);
      const audit = ok(
        await client.callTool({ name: 'search_audit', arguments: { actor: 'fleet-assistant', limit: 20 } }),
      );
      expect((audit.entries as Array<{ action: string }>).map((e) => e.action)).toEqual(
        expect.arrayContaining(['MCP send_message', 'MCP run_workflow']),
      );

      // No node holds anything of the session: initialized on node 0, listed on node 1, and each
      // tool answered by whichever node came next (both served tools).
      const nodeOf = (what: string): number | undefined =>
        balancer.served.find((s) => s.method === what)?.node;
      expect(nodeOf('POST initialize')).toBe(0);
      expect(nodeOf('POST tools/list')).toBe(1);
      const names = ['list_agents', 'send_message', 'run_workflow', 'get_run', 'search_audit'];
      expect(new Set(names.map((name) => nodeOf(`POST tools/call ${name}`)))).toEqual(new Set([0, 1]));

      // A viewer is refused the state-changing tools on whichever node it reaches.
      const viewerClient = await connect(viewer, roundRobin(fleet.urls).fetch);
      for (const [name, args, action] of [
        ['send_message', { agent: 'claims-intake', message: 'hi' }, 'AgentSendMessage'],
        ['run_workflow', { workflow: 'claims-review', input: 'x' }, 'WorkflowRun'],
      ] as const) {
        expect(refusal(await viewerClient.callTool({ name, arguments: args }))).toEqual({
          error: 'forbidden',
          message: `role viewer may not perform ${action}`,
        });
      }

      // SIGKILL node 0 between calls: the same client goes on against node 1.
      await fleet.apis[0]!.kill();
      const before = balancer.served.length;
      expect(ok(await client.callTool({ name: 'get_run', arguments: { run_id: run.id } })).state).toBe(
        'Completed',
      );
      const after = ok(
        await client.callTool({
          name: 'send_message',
          arguments: { agent: 'policy-servicing', message: 'Add a named driver' },
        }),
      );
      expect(after).toMatchObject({ agent_name: 'policy-servicing', content: 'Add a named driver' });
      const second = ok(
        await client.callTool({
          name: 'run_workflow',
          arguments: { workflow: 'claims-review', input: 'Cracked windscreen', wait_secs: 90 },
        }),
      );
      expect(second.state).toBe('Completed');
      expect(ok(await client.callTool({ name: 'list_agents', arguments: {} })).agents).toHaveLength(2);
      const trail = ok(
        await client.callTool({
          name: 'search_audit',
          arguments: { actor: 'fleet-assistant', category: 'workflows', limit: 5 },
        }),
      );
      expect(
        (trail.entries as Array<{ metadata: { run_id?: string } }>).map((e) => e.metadata.run_id),
      ).toEqual(expect.arrayContaining([run.id, second.id]));
      expect(new Set(balancer.served.slice(before).map((s) => s.node))).toEqual(new Set([1]));
    }, 240_000);
  },
);
