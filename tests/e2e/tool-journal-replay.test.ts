import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerClaims } from '../support/claims-example.ts';
import { auditResultsOf } from '../support/journal-faults.ts';
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
import { parseEventStream } from '../../apps/platform/src/testing/platform-test-api.ts';

// The tool-call journal without a crash (docs/tools.md "The tool-call journal"), on the
// all-in-one: a step retried by its error mode is given the answer its first attempt journaled; a
// retry that decides to call otherwise is escalated rather than written; a run's event stream
// shows its calls as they go. Then, with the claims system's package declaring that it honours
// idempotency keys, a call cut off is made again with its original key and the claims system
// answers the claim it already opened. (The operator's `[integrations.idempotent_keys]`, which
// overrides the package, is the README's "kill mid-claim" walkthrough: readme-journal.test.ts.)
let bench: JournalPlatform;
const base = (): string => bench.base;

beforeAll(async () => {
  bench = await startJournalPlatform('ap-journal-replay-');
}, 120_000);
afterAll(async () => bench?.close());

describe('the tool-call journal across attempts of a step', () => {
  let retrying: string;
  beforeAll(async () => {
    retrying = await installWorkflow(base(), undefined, await writeClaimWorkflow(bench.packages, 'open-claim-retry', { error_mode: { Retry: { max_retries: 1 } } }));
  });

  it('a Retry is given the answer the first attempt journaled: the claims system sees one call, the model the recorded claim', async () => {
    bench.knobs.failFinal = 1;
    const started = await call(base(), 'POST', `/workflows/${retrying}/run`, { body: { input: CLAIM_INPUT('retried') } });
    const runId: string = started.body.id;
    const run: Json = await waitRunEnded(base, undefined, runId);
    expect(run.state, JSON.stringify(run)).toBe('Completed');
    const calls = callsFor(await claimsCalls(bench.callsLog), runId);
    expect(calls).toEqual([expect.objectContaining({ idempotency_key: `${runId}:0.0:0` })]);
    expect(run.tool_calls).toEqual([expect.objectContaining({ step: 'open', idempotency_key: `${runId}:0.0:0`, state: 'answered', replays: 1 })]);
    // The second attempt's model got the claim the first attempt opened, as the tool's result.
    const finals = modelRequestsFor(bench.model.requests, '(retried)').filter((r) => conversationOf(r).results.length === 2);
    expect(finals).toHaveLength(2);
    const [lookup, opened] = conversationOf(finals[1]!).results;
    expect(lookup).toContain('Ada Lovelace');
    expect(opened).toBe(conversationOf(finals[0]!).results[1]);
    expect(await auditResultsOf(base(), undefined, `${runId}:0.0:0`, 3)).toEqual(['started', 'success', 'replayed']);
  });

  it('a Retry whose model calls otherwise than the journal holds is Escalated, not written a second time', async () => {
    bench.knobs.failFinal = 1;
    bench.knobs.variants = [' (first try)', ' (second try)'];
    const started = await call(base(), 'POST', `/workflows/${retrying}/run`, { body: { input: CLAIM_INPUT('diverged') } });
    const runId: string = started.body.id;
    const run: Json = await waitRunEnded(base, undefined, runId);
    expect(bench.knobs.variants).toEqual([]);
    expect(run.state, JSON.stringify(run)).toBe('Escalated');
    expect(run.error).toMatch(/other arguments/);
    expect(run.escalation.calls).toEqual([expect.objectContaining({ idempotency_key: `${runId}:0.0:0`, state: 'answered' })]);
    expect(callsFor(await claimsCalls(bench.callsLog), runId)).toHaveLength(1);
  });

  it('the run\'s event stream shows each call as the journal records it, with its key', async () => {
    const plain = await installWorkflow(base(), undefined, await writeClaimWorkflow(bench.packages, 'open-claim-watched'));
    bench.knobs.finalDelayMs = 1_500;
    const started = await call(base(), 'POST', `/workflows/${plain}/run`, { body: { input: CLAIM_INPUT('watched') } });
    const events = parseEventStream((await call(base(), 'GET', `/runs/${started.body.id}/events`)).text);
    bench.knobs.finalDelayMs = 0;
    const calls = events.filter((e) => e.event === 'tool_call').map((e) => JSON.parse(e.data));
    expect(calls.at(-1)).toMatchObject({ step: 'open', tool: 'open_claim', idempotency_key: `${started.body.id}:0.0:0`, state: 'answered' });
    // It came live, before the step's result and the end of the run.
    const names = events.map((e) => e.event);
    expect(names.lastIndexOf('tool_call')).toBeLessThan(names.indexOf('step'));
    expect(JSON.parse(events.at(-1)!.data).tool_calls).toEqual([expect.objectContaining({ state: 'answered' })]);
  });
});

describe('an integration whose package declares it honours idempotency keys ([standards] idempotent_keys)', () => {
  let honouring: JournalPlatform;
  beforeAll(async () => {
    honouring = await startJournalPlatform('ap-journal-keys-', { manifestIdempotentKeys: true });
  }, 120_000);
  afterAll(async () => honouring?.close());

  it('a call cut off by the step timeout is made again by the Retry with its original key; the claims system answers the claim it opened', async () => {
    const wf = await installWorkflow(honouring.base, undefined, await writeClaimWorkflow(honouring.packages, 'open-claim-keys', { timeout_secs: 3, error_mode: { Retry: { max_retries: 1 } } }));
    await setClaimsDelay(honouring.claims.url, 60_000);
    const started = await call(honouring.base, 'POST', `/workflows/${wf}/run`, { body: { input: CLAIM_INPUT('honoured') } });
    const runId: string = started.body.id;
    await waitUntil(async () => callsFor(await claimsCalls(honouring.callsLog), runId).length === 1, { message: 'the first attempt to reach the claims system' });
    await setClaimsDelay(honouring.claims.url, 0);
    const run: Json = await waitRunEnded(() => honouring.base, undefined, runId);
    expect(run.state, JSON.stringify(run)).toBe('Completed');
    // Two requests, one key: the system of record recognised the repeat; one claim exists.
    expect(callsFor(await claimsCalls(honouring.callsLog), runId).map((c) => c.idempotency_key)).toEqual([`${runId}:0.0:0`, `${runId}:0.0:0`]);
    expect((await ledgerClaims(honouring.ledger)).filter((c) => c.idempotency_key === `${runId}:0.0:0`)).toHaveLength(1);
    expect(run.output).toContain('"repeated":true');
    expect(run.tool_calls).toEqual([expect.objectContaining({ state: 'answered', idempotent_keys: true })]);
    expect(await auditResultsOf(honouring.base, undefined, `${runId}:0.0:0`, 4)).toEqual(['started', 'unknown', 'started', 'success']);
  });
});
