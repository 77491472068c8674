import { join } from 'node:path';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  installWorkflow,
  setClaimsDelay,
  startJournalPlatform,
  stoppedAt,
  waitRunEnded,
  writeClaimWorkflow,
  type Json,
  type JournalPlatform,
} from '../support/journal-kit.ts';
import { call } from '../support/platform-process.ts';

// Fault injection, all-in-one (docs/tools.md "The tool-call journal"): the platform is killed
// (kill -9) at each point of a state-changing call's life, once while a workflow step makes it and
// once while an invocation with an idempotency key makes it, then restarted; the claims system
// counts every create_claim request it receives. Each case (tests/support/journal-faults.ts) says
// what the journal and the claims system hold at the kill and what the re-run must do, and why.
let bench: JournalPlatform;
let workflowId: string;
const base = (): string => bench.base;

beforeAll(async () => {
  bench = await startJournalPlatform('ap-journal-faults-');
  workflowId = await installWorkflow(bench.base, undefined, await writeClaimWorkflow(bench.packages, 'open-claim'));
}, 120_000);
afterAll(async () => bench?.close());

/** Restarts the platform set to stop at the case's point (or slows the claims system for `in_flight`). */
async function arm(fault: FaultCase): Promise<void> {
  await bench.kill();
  if (fault.point === 'in_flight') {
    await setClaimsDelay(bench.claims.url, 60_000);
    await bench.start();
  } else {
    await bench.start({ AP_FAULT_STOP_AT: fault.point });
  }
}

/** Waits for the kill moment of the case, kills the platform there, and restarts it plain. */
async function killAtPoint(fault: FaultCase, callsBefore: number): Promise<void> {
  if (fault.point === 'in_flight') {
    await waitUntil(async () => (await claimsCalls(bench.callsLog)).length === callsBefore + 1, { timeoutMs: 30_000, message: 'create_claim to reach the claims system' });
  } else {
    await stoppedAt(() => bench.platform.output(), fault.point);
  }
  await bench.kill();
}

async function restart(): Promise<void> {
  await setClaimsDelay(bench.claims.url, 0);
  await bench.start();
}

async function readAtKill<T>(read: (store: Awaited<ReturnType<typeof openEmbeddedStore>>) => Promise<T>): Promise<T> {
  const store = await openEmbeddedStore({ path: join(bench.dir, 'data', 'platform.db') });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

describe('kill -9 of the all-in-one at each point of a state-changing call of a workflow step', () => {
  it.each(FAULT_CASES.map((c) => [c.point, c] as const))('%s', async (_, fault) => {
    await arm(fault);
    const callsBefore = (await claimsCalls(bench.callsLog)).length;
    const started = await call(base(), 'POST', `/workflows/${workflowId}/run`, { body: { input: CLAIM_INPUT(`step ${fault.point}`) } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId: string = started.body.id;
    const key = `${runId}:0.0:0`;
    await killAtPoint(fault, callsBefore);
    expect(stateAtKill(await readAtKill((store) => runJournalAtKill(store, runId))), 'the journal at the kill').toBe(fault.journalAtKill);
    expect(callsFor(await claimsCalls(bench.callsLog), runId), 'create_claim requests at the kill').toHaveLength(fault.callsAtKill);

    await restart();
    const run: Json = await waitRunEnded(base, undefined, runId);
    expectRunRecovered(fault, run, callsFor(await claimsCalls(bench.callsLog), runId), await auditResultsOf(base(), undefined, key, auditedCount(fault)));
  });
});

describe('kill -9 of the all-in-one at each point of a state-changing call of an invocation, then the client retries with its key', () => {
  it.each(FAULT_CASES.map((c) => [c.point, c] as const))('%s', async (_, fault) => {
    await arm(fault);
    const callsBefore = (await claimsCalls(bench.callsLog)).length;
    const body = { source: 'Api', message: CLAIM_INPUT(`invoke ${fault.point}`), correlation_id: `c-${fault.point}`, idempotency_key: `fnol-${fault.point}` };
    const first = call(base(), 'POST', `/agents/${bench.agentId}/invoke`, { body }).catch((error: unknown) => ({ status: 0, body: String(error) }));
    await killAtPoint(fault, callsBefore);
    expect((await first).status, 'the first request died with the platform').toBe(0);
    expect(stateAtKill(await readAtKill((store) => invocationJournalAtKill(store, body.idempotency_key))), 'the journal at the kill').toBe(fault.journalAtKill);
    expect((await claimsCalls(bench.callsLog)).length - callsBefore, 'create_claim requests at the kill').toBe(fault.callsAtKill);

    await restart();
    const retry = await call(base(), 'POST', `/agents/${bench.agentId}/invoke`, { body: { ...body, correlation_id: `c-${fault.point}-retry` } });
    const key = expectRetryAnswered(fault, retry, (await claimsCalls(bench.callsLog)).slice(callsBefore));
    if (key !== null) expect(await auditResultsOf(base(), undefined, key, 2)).toEqual(['started', 'unknown']);
    // The answer is kept for the key: asking again runs nothing.
    const again = await call(base(), 'POST', `/agents/${bench.agentId}/invoke`, { body });
    expect(again.status).toBe(fault.invocation);
    expect((await claimsCalls(bench.callsLog)).slice(callsBefore)).toHaveLength(fault.callsInTheEnd);
  });
});
