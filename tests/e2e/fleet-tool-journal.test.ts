import { join } from 'node:path';
import { integrationStateCollections } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClaimsSystem, type ExampleServer } from '../support/claims-example.ts';
import { startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import {
  auditedCount,
  auditResultsOf,
  expectRetryAnswered,
  expectRunRecovered,
  FAULT_CASES,
  invocationJournalAtKill,
  runJournalAtKill,
  stateAtKill,
  type FaultCase,
} from '../support/journal-faults.ts';
import {
  CLAIM_INPUT,
  callsFor,
  claimsCalls,
  claimsModelKnobs,
  claimsReply,
  installClaimsHandler,
  installWorkflow,
  setClaimsDelay,
  stoppedAt,
  waitRunEnded,
  writeClaimWorkflow,
  type Json,
} from '../support/journal-kit.ts';
import { call } from '../support/platform-process.ts';

// Fault injection in a fleet (docs/tools.md "The tool-call journal"): an api node and agent
// workers over NATS, the claims system counting every create_claim request. The agent worker
// making a state-changing call is killed (kill -9) at each point of the call's life, while a
// workflow step makes it, while an invocation with an idempotency key makes it and while one without
// a key makes it; another worker recovers the step, or runs the api's re-dispatch of the invocation
// (docs/invocation.md "A worker that dies"). Then a step whose worker stalls after the answer
// was journaled is taken over by another worker, which replays the answer, and the stalled worker,
// resumed, can no longer write anything. Each case says why it ends as it does
// (tests/support/journal-faults.ts).
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const knobs = claimsModelKnobs();
let fleet: Fleet;
let claims: ExampleServer;
let token: string;
let api: string;
let agentId: string;
let workflowId: string;
let callsLog: string;
let store: Store;

/** Starts an agent worker (with `env`); returns once it runs the claims system's integration (its status row says so). */
async function addWorker(env: Record<string, string> = {}): Promise<AppProcess> {
  const since = new Date().toISOString();
  const worker = await fleet.add('agent-worker', env);
  fleet.workers.push(worker);
  const state = integrationStateCollections(store);
  await waitUntil(
    async () => {
      const hosts = (await state.hosts.find()).filter((h) => h.doc.process === 'agent-worker' && h.doc.started_at >= since);
      const rows = await state.nodes.find({ where: { integration_id: 'claims-system' } });
      return rows.some((r) => r.doc.status === 'Running' && hosts.some((h) => h.doc.id === r.doc.node_id));
    },
    { timeoutMs: 30_000, message: 'the new worker to run the claims-system integration' },
  );
  return worker;
}

/** Kills every agent worker and starts one (with `env`). */
async function onlyWorker(env: Record<string, string> = {}): Promise<AppProcess> {
  for (const worker of fleet.workers.splice(0)) await worker.kill();
  return addWorker(env);
}

async function arm(fault: FaultCase): Promise<AppProcess> {
  if (fault.point !== 'in_flight') return onlyWorker({ AP_FAULT_STOP_AT: fault.point });
  await setClaimsDelay(claims.url, 60_000);
  return onlyWorker();
}

/** Waits for the kill moment of the case and kills the worker there. */
async function killAtPoint(fault: FaultCase, worker: AppProcess, callsBefore: number): Promise<void> {
  if (fault.point === 'in_flight') {
    await waitUntil(async () => (await claimsCalls(callsLog)).length === callsBefore + 1, { timeoutMs: 30_000, message: 'create_claim to reach the claims system' });
  } else {
    await stoppedAt(() => worker.output(), fault.point);
  }
  await worker.kill();
  fleet.workers.splice(fleet.workers.indexOf(worker), 1);
}


async function recover(): Promise<void> {
  await setClaimsDelay(claims.url, 0);
  await onlyWorker();
}

describe.skipIf(natsBinary === null || redisBinary === null)('the tool-call journal in a fleet: 1 api node, agent workers over NATS', () => {
  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 1,
      schedulers: 0,
      reply: claimsReply(knobs),
      config: {
        network: { allow_private_targets: true },
        workflows: { lease_secs: 2, retry_backoff_ms: 200 },
        agents: { claim_lease_secs: 2 },
        integrations: { report_interval_secs: 1, report_stale_secs: 3 },
      },
    });
    api = fleet.urls[0]!;
    callsLog = join(fleet.dir, 'claims-calls.jsonl');
    claims = await startClaimsSystem(join(fleet.dir, 'claims-ledger.jsonl'), { CLAIMS_CALLS: callsLog });
    store = await fleet.openStore();
    token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    agentId = await installClaimsHandler(api, token, join(fleet.dir, 'packages'), claims.url);
    workflowId = await installWorkflow(api, token, await writeClaimWorkflow(join(fleet.dir, 'packages'), 'open-claim'));
  }, 180_000);
  afterAll(async () => {
    await store?.close();
    await claims?.stop();
    await fleet?.close();
  });

  describe('kill -9 of the worker making a workflow step\'s state-changing call; another worker recovers the step', () => {
    it.each(FAULT_CASES.map((c) => [c.point, c] as const))('%s', async (_, fault) => {
      const worker = await arm(fault);
      const callsBefore = (await claimsCalls(callsLog)).length;
      const started = await call(api, 'POST', `/workflows/${workflowId}/run`, { token, body: { input: CLAIM_INPUT(`fleet step ${fault.point}`) } });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      const runId: string = started.body.id;
      await killAtPoint(fault, worker, callsBefore);
      expect(stateAtKill(await runJournalAtKill(store, runId)), 'the journal at the kill').toBe(fault.journalAtKill);
      expect(callsFor(await claimsCalls(callsLog), runId), 'create_claim requests at the kill').toHaveLength(fault.callsAtKill);

      await recover();
      const run: Json = await waitRunEnded(() => api, token, runId);
      expectRunRecovered(fault, run, callsFor(await claimsCalls(callsLog), runId), await auditResultsOf(api, token, `${runId}:0.0:0`, auditedCount(fault)));
    });
  });

  describe('kill -9 of the worker making an invocation\'s state-changing call; the api sends it again under its key', () => {
    it.each(FAULT_CASES.map((c) => [c.point, c] as const))('%s', async (_, fault) => {
      const worker = await arm(fault);
      const callsBefore = (await claimsCalls(callsLog)).length;
      const body = { source: 'Api', message: CLAIM_INPUT(`fleet invoke ${fault.point}`), correlation_id: `fc-${fault.point}`, idempotency_key: `fleet-${fault.point}` };
      const first = call(api, 'POST', `/agents/${agentId}/invoke`, { token, body });
      await killAtPoint(fault, worker, callsBefore);
      expect(stateAtKill(await invocationJournalAtKill(store, body.idempotency_key)), 'the journal at the kill').toBe(fault.journalAtKill);

      // The api node notices the silent worker and sends the same request again (a re-dispatch waits
      // for a worker to take it); the next run takes the key over with its journal once the dead
      // owner's claim lapses. The client's first request itself ends 200 or 409: no retry needed.
      await recover();
      const answered = await first;
      const key = expectRetryAnswered(fault, answered, (await claimsCalls(callsLog)).slice(callsBefore));
      if (key !== null) expect(await auditResultsOf(api, token, key, 2)).toEqual(['started', 'unknown']);
    });
  });

  describe('kill -9 of the worker making a keyless invocation\'s state-changing call: its fence decides', () => {
    it.each(FAULT_CASES.map((c) => [c.point, c] as const))('%s', async (_, fault) => {
      const worker = await arm(fault);
      const callsBefore = (await claimsCalls(callsLog)).length;
      const body = { source: 'Api', message: CLAIM_INPUT(`fleet keyless ${fault.point}`), correlation_id: `fk-${fault.point}` };
      const first = call(api, 'POST', `/agents/${agentId}/invoke`, { token, body });
      await killAtPoint(fault, worker, callsBefore);
      await recover();
      const answered = await first;
      const calls = (await claimsCalls(callsLog)).slice(callsBefore);
      // Before the call was journaled, the invocation's fence was not taken: the api fences it off and
      // sends it again, and the next worker makes the call, once. From the fence on, a call may have
      // left: 409 naming it (the system of record got it at most once), never sent again.
      if (fault.point === 'tool.before_journal') {
        expect(answered.status, JSON.stringify(answered.body)).toBe(200);
        expect(answered.body.content).toMatch(/"claim_no":"CL-\d+"/);
        expect(calls).toHaveLength(1);
        return;
      }
      expect(answered.status, JSON.stringify(answered.body)).toBe(409);
      expect(answered.body.error).toMatchObject({ category: 'Conflict', details: { reason: 'tool_calls_in_doubt', calls: [{ tool: 'open_claim', state: 'unknown' }] } });
      const doubt = answered.body.error.details.calls[0];
      expect(answered.body.error.message).toContain(doubt.idempotency_key);
      expect(calls).toHaveLength(fault.callsAtKill);
      expect(calls.every((c) => c.idempotency_key === doubt.idempotency_key)).toBe(true);
    });
  });

  it('a step whose worker stalls after the answer was journaled is taken over by another worker, which replays it; the stalled worker, resumed, writes nothing', async () => {
    const stalled = await onlyWorker({ AP_FAULT_STOP_AT: 'tool.recorded' });
    const callsBefore = (await claimsCalls(callsLog)).length;
    const started = await call(api, 'POST', `/workflows/${workflowId}/run`, { token, body: { input: CLAIM_INPUT('fleet takeover') } });
    const runId: string = started.body.id;
    await stoppedAt(() => stalled.output(), 'tool.recorded');
    // A second worker: the stalled one's lease lapses, a sweep re-dispatches the step, this one claims it.
    await addWorker();
    const run: Json = await waitRunEnded(() => api, token, runId);
    expect(run.state).toBe('Completed');
    expect(run.tool_calls).toEqual([expect.objectContaining({ idempotency_key: `${runId}:0.0:0`, state: 'answered', replays: 1, worker: expect.any(String) })]);
    expect(callsFor(await claimsCalls(callsLog), runId)).toHaveLength(1);

    // The stalled worker goes on from where it stopped, and drains (SIGTERM finishes what it was
    // doing first): its checkpoint is fenced by the lease it lost, so nothing it does lands.
    process.kill(stalled.child.pid!, 'SIGCONT');
    fleet.workers.splice(fleet.workers.indexOf(stalled), 1);
    expect(await stalled.stop(), stalled.output()).toBe(0);
    const after: Json = (await call(api, 'GET', `/runs/${runId}`, { token })).body;
    expect(after).toMatchObject({ state: 'Completed', output: run.output, step_results: run.step_results, tool_calls: run.tool_calls });
    expect((await claimsCalls(callsLog)).length).toBe(callsBefore + 1);
  });
});
