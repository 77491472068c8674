import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerClaims } from '../support/claims-example.ts';
import {
  CLAIM_INPUT,
  callsFor,
  claimsCalls,
  conversationOf,
  installWorkflow,
  modelRequestsFor,
  setClaimsDelay,
  startJournalPlatform,
  waitRunEnded,
  writeClaimWorkflow,
  type Json,
  type JournalPlatform,
} from '../support/journal-kit.ts';
import { call } from '../support/platform-process.ts';

// The four reproductions of the tool-call journal issue, driven from outside the all-in-one
// process: a claims system behind MCP that counts every create_claim request per idempotency key,
// a model stand-in, and kill -9 of the platform at the moment each reproduction names. Before the
// journal, each of them ended with the claims system holding a second write under a second key
// (or a call missing from the audit trail).
let bench: JournalPlatform;
const base = (): string => bench.base;

beforeAll(async () => {
  bench = await startJournalPlatform('ap-journal-repro-');
}, 120_000);
afterAll(async () => bench?.close());

async function killAndRestart(): Promise<void> {
  await bench.kill();
  await bench.start();
}

describe('the tool-call journal: the reproductions, against the all-in-one', () => {
  it('1. a write that returned is not done again when the platform is killed while the model writes the step\'s final reply', async () => {
    const wf = await installWorkflow(base(), undefined, await writeClaimWorkflow(bench.packages, 'open-claim'));
    bench.knobs.finalDelayMs = 120_000;
    const started = await call(base(), 'POST', `/workflows/${wf}/run`, { body: { input: CLAIM_INPUT('r1') } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId: string = started.body.id;
    // The model has both tool results and is writing the final reply: open_claim answered.
    await waitUntil(() => modelRequestsFor(bench.model.requests, '(r1)').some((r) => conversationOf(r).results.length === 2), {
      timeoutMs: 30_000,
      message: 'the model asked for the final reply',
    });
    expect(callsFor(await claimsCalls(bench.callsLog), runId)).toHaveLength(1);
    await killAndRestart();
    bench.knobs.finalDelayMs = 0;

    const run: Json = await waitRunEnded(base, undefined, runId);
    expect(run.state, JSON.stringify(run)).toBe('Completed');
    // The system of record saw the write once, under the step's first key; the recorded answer
    // went back to the model instead.
    expect(callsFor(await claimsCalls(bench.callsLog), runId)).toEqual([expect.objectContaining({ idempotency_key: `${runId}:0.0:0` })]);
    expect((await ledgerClaims(bench.ledger)).filter((c) => c.idempotency_key?.startsWith(runId))).toHaveLength(1);
    expect(run.output).toMatch(/"claim_no":"CL-\d+"/);
    expect(run.tool_calls).toEqual([
      expect.objectContaining({ step: 'open', tool: 'open_claim', idempotency_key: `${runId}:0.0:0`, state: 'answered', replays: 1 }),
    ]);
  });

  it('3. a client\'s retry of an invocation after a kill mid-call does not repeat the write; 4. the call is in the audit trail', async () => {
    await setClaimsDelay(bench.claims.url, 60_000);
    const before = (await claimsCalls(bench.callsLog)).length;
    const body = { source: 'Api', message: CLAIM_INPUT('r3'), correlation_id: 'c-r3', idempotency_key: 'fnol-r3' };
    const first = call(base(), 'POST', `/agents/${bench.agentId}/invoke`, { body }).catch((error: unknown) => ({ status: 0, body: String(error) }));
    await waitUntil(async () => (await claimsCalls(bench.callsLog)).length === before + 1, { timeoutMs: 30_000, message: 'open_claim to reach the claims system' });
    await killAndRestart();
    await first;
    await setClaimsDelay(bench.claims.url, 0);

    const retry = await call(base(), 'POST', `/agents/${bench.agentId}/invoke`, { body: { ...body, correlation_id: 'c-r3-retry' } });
    const calls = (await claimsCalls(bench.callsLog)).slice(before);
    expect(calls).toHaveLength(1);
    const key = calls[0]!.idempotency_key!;
    // The outcome of the first call is unknown: the retry answers an error naming it, and keeps that answer.
    expect(retry.status, JSON.stringify(retry.body)).toBe(409);
    expect(retry.body.error.category).toBe('Conflict');
    expect(retry.body.error.message).toContain(key);
    expect(retry.body.error.details.calls).toEqual([expect.objectContaining({ tool: 'open_claim', idempotency_key: key, state: 'unknown' })]);
    const again = await call(base(), 'POST', `/agents/${bench.agentId}/invoke`, { body });
    expect(again.status).toBe(409);
    expect((await claimsCalls(bench.callsLog)).slice(before)).toHaveLength(1);

    // 4. The call cut off by the kill is in the audit trail: started before the request left,
    // unknown once the invocation was recovered.
    const audit = await call(base(), 'GET', '/security/audit?category=tools&limit=100');
    const entries = (audit.body.entries as Json[]).filter((e) => e.metadata?.idempotency_key === key);
    expect(entries.map((e) => e.result).sort()).toEqual(['started', 'unknown']);
    expect(entries.every((e) => e.action === 'tool.call open_claim')).toBe(true);
  });

  it('2. a write whose outcome is unknown (the step timed out) is not treated as done: the Retry escalates instead of writing again', async () => {
    await setClaimsDelay(bench.claims.url, 60_000);
    const wf = await installWorkflow(base(), undefined, await writeClaimWorkflow(bench.packages, 'open-claim-retry', { timeout_secs: 4, error_mode: { Retry: { max_retries: 1 } } }));
    const started = await call(base(), 'POST', `/workflows/${wf}/run`, { body: { input: CLAIM_INPUT('r2') } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId: string = started.body.id;
    const run: Json = await waitRunEnded(base, undefined, runId);
    expect(run.state, JSON.stringify(run)).toBe('Escalated');
    expect(callsFor(await claimsCalls(bench.callsLog), runId)).toEqual([expect.objectContaining({ idempotency_key: `${runId}:0.0:0` })]);
    expect(run.escalation.calls).toEqual([expect.objectContaining({ tool: 'open_claim', idempotency_key: `${runId}:0.0:0`, state: 'unknown' })]);
    expect(run.error).toContain(`${runId}:0.0:0`);
  });
});
