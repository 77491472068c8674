import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeReply, RecordedRequest } from '@agent-platform/testkit';
import { waitUntil } from '@agent-platform/testkit';
import { workflowRuns } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsSystemPackage, ledgerClaims, startClaimsSystem, type ExampleServer } from '../support/claims-example.ts';
import { pidOwningPort, startFleet, type Fleet } from '../support/fleet.ts';
import { setClaimsDelay } from '../support/journal-kit.ts';
import { call } from '../support/platform-process.ts';

// Tools in a fleet (issue 10): an integration connected through the api node is used by agents on
// both workers; a worker SIGKILLed in the middle of a state-changing call of a workflow step
// leaves the run Escalated, and the claims system saw the call exactly once.
const HANDLER = fileURLToPath(new URL('../../examples/claims-handler', import.meta.url));

/** A model that looks the policy up, opens a claim when asked to, then reports the tool results. */
function claimsReply(request: RecordedRequest): FakeReply {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string | null }>;
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const message = String(messages[lastUser]?.content ?? '');
  const results = messages.slice(lastUser + 1).filter((m) => m.role === 'tool').map((m) => String(m.content));
  const policy = /\b[A-Z]{2}-\d{3,}\b/.exec(message)?.[0] ?? 'HO-1234';
  if (results.length === 0) return { tool_calls: [{ name: 'lookup_policy', arguments: { policy_number: policy } }] };
  if (results.length === 1 && /\bopen\b/i.test(message)) return { tool_calls: [{ name: 'open_claim', arguments: { policy_number: policy, description: message } }] };
  return { text: `tools said: ${results.join(' | ')}` };
}

let fleet: Fleet;
let claims: ExampleServer;
let store: Store;
let token: string;
let api: string;
let agent: string;
let ledger: string;

beforeAll(async () => {
  fleet = await startFleet({
    apis: 1,
    workers: 2,
    schedulers: 0,
    reply: claimsReply,
    config: { network: { allow_private_targets: true }, workflows: { lease_secs: 2 } },
  });
  api = fleet.urls[0]!;
  ledger = join(fleet.dir, 'claims-ledger.jsonl');
  claims = await startClaimsSystem(ledger);
  store = await fleet.openStore();
  token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
  const pkgDir = join(fleet.dir, 'packages');
  await mkdir(pkgDir);
  const installed = await call(api, 'POST', '/integrations/install', { token, body: { name: await claimsSystemPackage(pkgDir, claims.url) } });
  expect(installed.status, JSON.stringify(installed.body)).toBe(201);
  const connected = await call(api, 'POST', '/integrations/claims-system/connect', { token });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  const handler = await call(api, 'POST', '/catalog/install', { token, body: { path: HANDLER, activate: true } });
  expect(handler.status, JSON.stringify(handler.body)).toBe(201);
  agent = handler.body.installed.at(-1).id;
}, 120_000);

afterAll(async () => {
  await store?.close();
  await claims?.stop();
  await fleet?.close();
});

async function workerOf(request: RecordedRequest | undefined): Promise<number | null> {
  if (request?.remotePort === undefined) return null;
  return pidOwningPort(fleet.workers.map((w) => w.child.pid!), request.remotePort);
}

describe('tools in a fleet: 1 api node, 2 agent workers over NATS', () => {
  it('an integration connected through the api node is used by the agents of both workers, one after the other was SIGKILLed', async () => {
    const status = await call(api, 'GET', '/integrations/claims-system/status', { token });
    expect(status.body).toEqual({ id: 'claims-system', status: 'Running' });

    const first = await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: 'look up AU-5678' } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.tool_calls).toEqual([{ tool_name: 'lookup_policy', skill_id: 'claims-system', duration_ms: expect.any(Number), success: true }]);
    expect(first.body.content).toContain('Alan Turing');
    const served = await workerOf(fleet.provider.requests.at(-1));
    const owner = fleet.workers.find((w) => w.child.pid === served);
    expect(owner, 'the worker that ran the first message').toBeDefined();

    await owner!.kill();
    fleet.workers.splice(fleet.workers.indexOf(owner!), 1);
    const second = await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: 'look up HO-1234' } });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.tool_calls).toEqual([{ tool_name: 'lookup_policy', skill_id: 'claims-system', duration_ms: expect.any(Number), success: true }]);
    expect(second.body.content).toContain('Ada Lovelace');
    expect(await workerOf(fleet.provider.requests.at(-1))).toBe(fleet.workers[0]!.child.pid);
  });

  it('a worker SIGKILLed after journaling a state-changing call leaves the run Escalated; the system of record saw the call once', async () => {
    // The claims system now holds create_claim's answer for a while after recording the claim. Set
    // on the running server: restarting it dropped the workers' connections, and a run started
    // while they were still reconnecting (backoff, slower on a loaded machine) failed its tools.
    await setClaimsDelay(claims.url, 60_000);
    const wfDir = join(fleet.dir, 'packages', 'open-claim');
    await mkdir(join(wfDir, 'payload'), { recursive: true });
    await writeFile(
      join(wfDir, 'package.toml'),
      '[package]\ntype = "workflow-template"\nname = "open-claim"\ntitle = "Open a claim"\nversion = "1.0.0"\ndescription = "Opens a claim."\nlicense = "Apache-2.0"\nmin_platform_version = "0.1.0"\n',
    );
    await writeFile(
      join(wfDir, 'payload', 'workflow.json'),
      JSON.stringify({ description: 'Opens a claim.', agents_required: ['claims-handler'], steps: [{ name: 'open', agent: 'claims-handler', prompt_template: '{{input}}' }] }),
    );
    const wf = await call(api, 'POST', '/catalog/install', { token, body: { path: wfDir } });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const before = (await ledgerClaims(ledger)).length;

    const started = await call(api, 'POST', `/workflows/${wf.body.installed.at(-1).id}/run`, { token, body: { input: 'open a claim for policy HO-1234: hail broke the roof' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId: string = started.body.id;
    const runs = workflowRuns(store);
    await waitUntil(
      async () => (await ledgerClaims(ledger)).length === before + 1 && (await runs.get(runId))?.doc.pending['0.0']?.journal?.[0]?.state === 'started',
      { timeoutMs: 30_000, message: 'the claim recorded and its call journaled, unconfirmed' },
    ).catch(async (error: unknown) => {
      const doc = (await runs.get(runId))?.doc;
      throw new Error(`${(error as Error).message}: ${(await ledgerClaims(ledger)).length - before} claims recorded; run ${JSON.stringify(doc)?.slice(0, 1500)}\n${fleet.logs()}`);
    });
    for (const worker of fleet.workers) await worker.kill();
    fleet.workers.length = 0;
    fleet.workers.push(await fleet.add('agent-worker'));

    let run: { state: string; error: string; escalation: { step: string; calls: Array<Record<string, string>> } } | undefined;
    await waitUntil(
      async () => {
        run = (await call(api, 'GET', `/runs/${runId}`, { token })).body;
        return run?.state === 'Escalated';
      },
      { timeoutMs: 30_000, message: `the run to be Escalated (${JSON.stringify(run)})` },
    );
    expect(run!.escalation.step).toBe('open');
    expect(run!.escalation.calls).toEqual([
      {
        position: 0,
        state: 'unknown',
        idempotent_keys: false,
        replays: 0,
        audit_seq: expect.any(Number),
        idempotency_key: `${runId}:0.0:0`,
        tool: 'open_claim',
        provider_id: 'claims-system',
        native_tool: 'create_claim',
        args_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        at: expect.any(String),
        worker: expect.any(String),
      },
    ]);
    expect(run!.error).toMatch(/open_claim.*not re-executed/);
    // The step was not executed again: the system of record has the claim once, under the journaled key.
    await new Promise((r) => setTimeout(r, 1_000));
    const opened = await ledgerClaims(ledger);
    expect(opened).toHaveLength(before + 1);
    expect(opened.at(-1)!.idempotency_key).toBe(`${runId}:0.0:0`);
  });
});
