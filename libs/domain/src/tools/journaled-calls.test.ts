import { describe, expect, it } from 'vitest';
import type { AuditRecordInput } from '../audit/audit-entry.ts';
import { Errors } from '../errors/errors.ts';
import { ToolLoopHalt } from '../models/tool-loop.ts';
import { memoryJournal, type MemoryJournal } from '../testing/memory-journal.ts';
import { argsHash } from './args-hash.ts';
import { openCallSequence, type CallEffects, type JournaledTarget } from './journaled-calls.ts';

// The tool-call journal's rules (docs/tools.md "The tool-call journal"), one execution and its
// re-runs at a time, against a system of record that counts what reaches it.
const subject = { identity: 'agent:claims-handler', role: 'agent', agent_id: 'a-1', correlation_id: 'c-1' };

interface Recorded extends AuditRecordInput {
  seq: number;
}

function harness() {
  const audit: Recorded[] = [];
  const reached: Array<{ args: Record<string, unknown>; key: string }> = [];
  const effects: CallEffects = {
    audit: { record: async (input) => (audit.push({ ...input, seq: audit.length + 1 }), audit.at(-1)!) },
    now: () => new Date('2026-11-28T10:00:00.000Z'),
    warn: () => undefined,
    worker: 'worker-1',
  };
  let answer: () => Promise<{ text: string; is_error: boolean }> = async () => ({ text: `{"claim_no":"CL-${reached.length}"}`, is_error: false });
  const target = (overrides: Partial<JournaledTarget> = {}): JournaledTarget => ({
    tool: 'open_claim',
    provider_id: 'claims-system',
    native_tool: 'create_claim',
    honoursKeys: async () => false,
    async run(args, options) {
      reached.push({ args, key: options.idempotencyKey });
      return answer();
    },
    ...overrides,
  });
  const call = async (journal: MemoryJournal, args: Record<string, unknown>, t = target(), signal?: AbortSignal) => {
    const calls = await openCallSequence(journal, subject, effects);
    return { calls, result: calls.call(t, args, argsHash(args), signal) };
  };
  return { audit, reached, effects, target, call, answerWith: (f: typeof answer) => (answer = f) };
}

const ARGS = { policy_number: 'HO-1234', description: 'hail' };

/** What a rejected call halts the tool loop with. */
async function haltReason(promise: Promise<unknown>): Promise<unknown> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ToolLoopHalt);
  return (error as ToolLoopHalt).reason;
}

describe('the tool-call journal', () => {
  it('journals a call started before the request leaves and answered as soon as it returns, under the key of its position', async () => {
    const h = harness();
    const journal = memoryJournal('run-1:0.0');
    let journaledBefore = false;
    const { result } = await h.call(journal, ARGS, h.target({ run: async (args, options) => ((journaledBefore = journal.entries[0]?.state === 'started'), h.reached.push({ args, key: options.idempotencyKey }), { text: 'ok', is_error: false }) }));
    expect(await result).toBe('ok');
    expect(journaledBefore).toBe(true);
    expect(h.reached).toEqual([{ args: ARGS, key: 'run-1:0.0:0' }]);
    expect(journal.writes.map((w) => w.state)).toEqual(['started', 'answered']);
    expect(journal.entries[0]).toMatchObject({ position: 0, state: 'answered', result: 'ok', is_error: false, idempotency_key: 'run-1:0.0:0', args_hash: argsHash(ARGS), worker: 'worker-1', audit_seq: 1 });
    expect(h.audit.map((a) => [a.action, a.result, a.metadata?.['idempotency_key']])).toEqual([
      ['tool.call open_claim', 'started', 'run-1:0.0:0'],
      ['tool.call open_claim', 'success', 'run-1:0.0:0'],
    ]);
    expect(h.audit[1]!.metadata).toMatchObject({ started_seq: 1, scope: 'run-1:0.0' });
  });

  it('gives a re-run the recorded answer of the same call at the same position: nothing reaches the system of record', async () => {
    const h = harness();
    const first = memoryJournal('inv-9');
    await (await h.call(first, ARGS)).result;
    const rerun = first.rerun();
    const { result } = await h.call(rerun, ARGS);
    expect(await result).toBe('{"claim_no":"CL-1"}');
    expect(h.reached).toHaveLength(1);
    expect(rerun.entries[0]).toMatchObject({ state: 'answered', replays: 1 });
    expect(h.audit.at(-1)).toMatchObject({ result: 'replayed', metadata: expect.objectContaining({ original_seq: 1, idempotency_key: 'inv-9:0' }) });
  });

  it('replays an error the system of record answered as that error, without calling again', async () => {
    const h = harness();
    h.answerWith(async () => ({ text: 'policy HO-1234 is lapsed', is_error: true }));
    const first = memoryJournal();
    await expect((await h.call(first, ARGS)).result).rejects.toThrow(/'create_claim' answered with an error: policy HO-1234 is lapsed/);
    await expect((await h.call(first.rerun(), ARGS)).result).rejects.toThrow(/policy HO-1234 is lapsed/);
    expect(h.reached).toHaveLength(1);
  });

  it('refuses a re-run whose call differs from the one journaled at its position, naming the key', async () => {
    const h = harness();
    const first = memoryJournal('run-2:0.0');
    await (await h.call(first, ARGS)).result;
    const reason = await haltReason((await h.call(first.rerun(), { ...ARGS, description: 'flood' })).result);
    expect(reason).toMatchObject({ category: 'Conflict', message: expect.stringContaining('run-2:0.0:0'), details: { reason: 'tool_calls_in_doubt' } });
    expect(h.reached).toHaveLength(1);
  });

  it('refuses at once a re-run of an execution cut off mid-call (unknown), before any call, and audits the call unknown', async () => {
    const h = harness();
    const first = memoryJournal('run-3:0.0');
    h.answerWith(() => new Promise(() => undefined));
    void (await h.call(first, ARGS)).result;
    await expect.poll(() => first.entries[0]?.state).toBe('started');
    const rerun = first.rerun({ lapsed: true });
    await expect(openCallSequence(rerun, subject, h.effects)).rejects.toMatchObject({
      category: 'Conflict',
      message: expect.stringMatching(/cut off .*open_claim \(key run-3:0\.0:0, unknown\)/),
      details: { calls: [expect.objectContaining({ idempotency_key: 'run-3:0.0:0', state: 'unknown' })] },
    });
    expect(h.reached).toHaveLength(1);
    expect(h.audit.at(-1)).toMatchObject({ result: 'unknown', metadata: expect.objectContaining({ recovered: true, idempotency_key: 'run-3:0.0:0' }) });
  });

  it('makes a call in doubt again with its original key when the integration honours idempotency keys', async () => {
    const h = harness();
    const first = memoryJournal('run-4:0.0');
    h.answerWith(async () => {
      throw Errors.integrationCallFailed('claims-system', 'create_claim', 'the connection broke');
    });
    const halted = await haltReason((await h.call(first, ARGS, h.target({ honoursKeys: async () => true }))).result);
    expect(halted).toMatchObject({ category: 'Internal', message: expect.stringContaining('the connection broke') });
    expect(first.entries[0]).toMatchObject({ state: 'unknown' });
    h.answerWith(async () => ({ text: 'CL-1 (repeated)', is_error: false }));
    expect(await (await h.call(first.rerun(), ARGS, h.target({ honoursKeys: async () => true }))).result).toBe('CL-1 (repeated)');
    expect(h.reached.map((r) => r.key)).toEqual(['run-4:0.0:0', 'run-4:0.0:0']);
  });

  it('stops the execution when a call is cut off in a live worker: unknown, in doubt, and the model is not told', async () => {
    const h = harness();
    const journal = memoryJournal('inv-5');
    h.answerWith(async () => {
      throw Errors.integrationCallTimeout('claims-system', 'create_claim', 30);
    });
    const reason = await haltReason((await h.call(journal, ARGS)).result);
    expect(reason).toMatchObject({ category: 'Conflict', message: expect.stringMatching(/'open_claim' was cut off .*did not answer within 30 s.*look key inv-5:0 up/) });
    expect(journal.entries[0]).toMatchObject({ state: 'unknown' });
    expect(h.audit.map((a) => a.result)).toEqual(['started', 'unknown']);
  });

  it('ends an aborted call unknown and stops with the abort reason', async () => {
    const h = harness();
    const journal = memoryJournal();
    const controller = new AbortController();
    h.answerWith(() => new Promise((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('aborted')))));
    const { result } = await h.call(journal, ARGS, h.target(), controller.signal);
    await expect.poll(() => h.reached.length).toBe(1);
    const timeout = Errors.timeout('the step took longer than 4 s');
    controller.abort(timeout);
    expect(await haltReason(result)).toBe(timeout);
    expect(journal.entries[0]).toMatchObject({ state: 'unknown' });
  });

  it('sends nothing when the invocation was stopped before the request left: not sent, and it stops with the reason', async () => {
    const h = harness();
    const journal = memoryJournal();
    const controller = new AbortController();
    const timeout = Errors.timeout('the step took longer than 4 s');
    controller.abort(timeout);
    expect(await haltReason((await h.call(journal, ARGS, h.target(), controller.signal)).result)).toBe(timeout);
    expect(h.reached).toEqual([]);
    expect(journal.entries[0]).toMatchObject({ state: 'not_sent' });
  });

  it('frees the position of a call that never left (not connected): the model is told and may call again', async () => {
    const h = harness();
    const journal = memoryJournal('inv-6');
    h.answerWith(async () => {
      throw Errors.integrationNotConnected('claims-system', 'its server is starting');
    });
    const { calls, result } = await h.call(journal, ARGS);
    await expect(result).rejects.toThrow(/not connected/);
    expect(journal.entries[0]).toMatchObject({ state: 'not_sent' });
    expect(h.audit.find((a) => a.result === 'failure')?.metadata).toMatchObject({ sent: false });
    // The next call of the execution takes the position, and its key: nothing reached the system under it.
    h.answerWith(async () => ({ text: 'CL-1', is_error: false }));
    expect(await calls.call(h.target(), ARGS, argsHash(ARGS))).toBe('CL-1');
    expect(journal.entries).toEqual([expect.objectContaining({ position: 0, state: 'answered', idempotency_key: 'inv-6:0' })]);
    // So may a re-run's, when the execution ended there.
    const cut = memoryJournal('inv-7');
    h.answerWith(async () => {
      throw Errors.integrationNotConnected('claims-system', 'its server is starting');
    });
    await expect((await h.call(cut, ARGS)).result).rejects.toThrow(/not connected/);
    h.answerWith(async () => ({ text: 'CL-2', is_error: false }));
    expect(await (await h.call(cut.rerun(), ARGS)).result).toBe('CL-2');
    expect(h.reached.map((r) => r.key)).toEqual(['inv-6:0', 'inv-6:0', 'inv-7:0', 'inv-7:0']);
  });

  it('does not call when the journal cannot be written (the step or key was lost)', async () => {
    const h = harness();
    const journal = memoryJournal();
    journal.failWrites = true;
    const reason = await haltReason((await h.call(journal, ARGS)).result);
    expect(String(reason)).toMatch(/no longer ours/);
    expect(h.reached).toEqual([]);
  });

  it('refuses a re-run that ends without repeating a write an earlier execution made; a write the system refused does not count', async () => {
    const h = harness();
    const first = memoryJournal('run-7:0.0');
    const calls = await openCallSequence(first, subject, h.effects);
    await calls.call(h.target(), ARGS, argsHash(ARGS));
    h.answerWith(async () => ({ text: 'no such policy', is_error: true }));
    await expect(calls.call(h.target(), { policy_number: 'XX-1', description: 'x' }, argsHash({ policy_number: 'XX-1', description: 'x' }))).rejects.toThrow();
    const rerun = await openCallSequence(first.rerun(), subject, h.effects);
    expect(() => rerun.finish()).toThrow(expect.objectContaining({ message: expect.stringMatching(/without repeating 1 state-changing tool call.*run-7:0\.0:0/) }));
    const complete = await openCallSequence(first.rerun(), subject, h.effects);
    await complete.call(h.target(), ARGS, argsHash(ARGS));
    expect(() => complete.finish()).not.toThrow();
  });
});
