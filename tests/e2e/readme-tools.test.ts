import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { claimsSystemPackage, ledgerClaims, startClaimsModel, startClaimsSystem, type ExampleServer } from '../support/claims-example.ts';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// README "An agent that acts: look up a policy and open a claim", as a user does it: the claims
// system's MCP server and the model stand-in in their own processes, the integration installed
// and connected, the agent installed (binding the contract), one message; the reply shows both
// tool calls, the system of record has the claim once, the audit trail has both calls.
const HANDLER = fileURLToPath(new URL('../../examples/claims-handler', import.meta.url));
let dir: string | undefined;
const processes: Array<PlatformProcess | ExampleServer> = [];

afterAll(async () => {
  for (const p of processes) {
    if ('stop' in p) await p.stop();
    else p.kill();
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('README tools example against the all-in-one platform', () => {
  it('an agent looks up a policy and opens a claim through an MCP server, and says so', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-tools-tour-'));
    const ledger = join(dir, 'claims-ledger.jsonl');
    const claims = await startClaimsSystem(ledger);
    processes.push(claims);
    const model = await startClaimsModel();
    processes.push(model);
    const config = {
      server: { listen: `127.0.0.1:${await freePort()}` },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      network: { allow_private_targets: true },
      licence: await writeLicence(dir, { provider_entitlements: [{ provider_id: 'claims-model', budget_usd: 10 }] }),
      providers: [{ id: 'claims-model', kind: 'openai', base_url: model.url, models: ['claims-demo'] }],
      models: { default: 'claims-model/claims-demo' },
    };
    await writeFile(join(dir, 'agent-platform.toml'), stringify(config));
    const platform = startPlatform(dir, ['--config', join(dir, 'agent-platform.toml')]);
    processes.push(platform);
    const B = await platform.listening();
    const token: string = (await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;

    const integration = await claimsSystemPackage(dir, claims.url);
    const installed = await call(B, 'POST', '/integrations/install', { token, body: { name: integration } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    expect(installed.body).toEqual({ status: 'installed', name: 'claims-system' });
    const connected = await call(B, 'POST', '/integrations/claims-system/connect', { token });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    const tools = await call(B, 'GET', '/integrations/claims-system/tools', { token });
    expect(tools.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(['create_claim', 'get_policy']);

    const agent = await call(B, 'POST', '/catalog/install', { token, body: { path: HANDLER, activate: true } });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const AGENT: string = agent.body.installed.at(-1).id;
    expect((await call(B, 'GET', '/contracts', { token })).body).toEqual({
      bindings: [{ contract: 'claims-api', integration_id: 'claims-system', bound_at: expect.any(String), bound_by: 'system' }],
    });

    const sent = await call(B, 'POST', `/agents/${AGENT}/send`, { token, body: { message: 'A burst pipe flooded my kitchen yesterday, policy HO-1234' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.content).toBe('Policy HO-1234 (Ada Lovelace, Homeowners) is active. I opened claim CL-0001 for you.');
    expect(sent.body.tool_calls).toEqual([
      { tool_name: 'lookup_policy', skill_id: 'claims-system', duration_ms: expect.any(Number), success: true },
      { tool_name: 'open_claim', skill_id: 'claims-system', duration_ms: expect.any(Number), success: true },
    ]);

    // The system of record has the claim once, with the key the platform sent.
    const opened = await ledgerClaims(ledger);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ claim_no: 'CL-0001', policy_no: 'HO-1234', loss_description: 'A burst pipe flooded my kitchen yesterday, policy HO-1234' });
    expect(opened[0]!.idempotency_key).toMatch(/:0$/);
    const listed = (await fetch(`http://127.0.0.1:${claims.port}/claims`).then((r) => r.json())) as { claims: unknown[] };
    expect(listed.claims).toHaveLength(1);

    // Both calls are in the audit trail: tool, agent, duration, outcome; arguments only as a hash.
    // open_claim changes the system of record: its start (with the key) comes before its outcome.
    const audit = await call(B, 'GET', '/security/audit?category=tools', { token });
    const entries = audit.body.entries ?? audit.body;
    expect(entries.map((e: { action: string; result: string }) => [e.action, e.result]).reverse()).toEqual([
      ['tool.call lookup_policy', 'success'],
      ['tool.call open_claim', 'started'],
      ['tool.call open_claim', 'success'],
    ]);
    expect(entries[0].metadata.idempotency_key).toBe(opened[0]!.idempotency_key);
    expect(JSON.stringify(entries)).not.toContain('burst pipe');
  });
});
