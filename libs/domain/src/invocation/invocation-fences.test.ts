import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvocationOutcome } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolLoopHalt } from '../models/tool-loop.ts';
import { argsHash } from '../tools/args-hash.ts';
import { openCallSequence, type JournaledTarget } from '../tools/journaled-calls.ts';
import { transientJournal } from '../tools/tool-call-journal.ts';
import { fencedJournal, invocationFences, invocationHold, INVOCATION_FENCES_COLLECTION, type InvocationFenceDoc } from './invocation-fences.ts';

// The fence of an invocation its requester may abandon (docs/invocation.md "A worker that dies"):
// the api abandoning an invocation whose worker it presumes lost, and that worker about to make
// its first state-changing call, or to charge, race on one document; whichever writes first
// decides, in both orders.
const subject = { identity: 'agent:a', role: 'agent', agent_id: 'a-1', correlation_id: 'c-1' };
const ARGS = { policy_number: 'HO-1' };
const RESULT: InvocationOutcome = { content: 'ok', tokens_used: 1, duration_ms: 1, correlation_id: 'c-1', source: 'Api', tool_calls: [], usage: { input_tokens: 1, output_tokens: 0 } };

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fences-'));
  store = await openEmbeddedStore({ path: join(dir, 'f.db') });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const docOf = async (id: string) => (await store.collection<InvocationFenceDoc>(INVOCATION_FENCES_COLLECTION, { ttlField: 'expires_at' }).get(id))?.doc;

/** The worker's first state-changing call of `invocationId`, through the fenced journal; counts what reaches the system. */
async function workerCalls(invocationId: string, reached: string[]): Promise<string> {
  const journal = fencedJournal(transientJournal(invocationId), invocationFences(store).of(invocationId), 'worker-1');
  const calls = await openCallSequence(journal, subject, { now: () => new Date(), warn: () => undefined, worker: 'worker-1' });
  const target: JournaledTarget = {
    tool: 'open_claim',
    provider_id: 'claims',
    native_tool: 'create_claim',
    honoursKeys: async () => false,
    run: async (_args, options) => (reached.push(options.idempotencyKey), { text: 'CL-1', is_error: false }),
  };
  return calls.call(target, ARGS, argsHash(ARGS));
}

describe('invocation fences (an invocation whose worker may be presumed lost)', () => {
  it('the api abandons first: the worker does not make the call, and the invocation stops', async () => {
    expect(await invocationFences(store).abandon('inv-1')).toEqual({ kind: 'abandoned' });
    const reached: string[] = [];
    const error = await workerCalls('inv-1', reached).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ToolLoopHalt);
    expect(String((error as ToolLoopHalt).reason)).toMatch(/abandoned by its requester.*'open_claim' was not called/);
    expect(reached).toEqual([]);
  });

  it('the worker starts its call first: the api finds the call in doubt and must not send the invocation again', async () => {
    const reached: string[] = [];
    expect(await workerCalls('inv-2', reached)).toBe('CL-1');
    expect(reached).toEqual(['inv-2:0']);
    const outcome = await invocationFences(store).abandon('inv-2');
    expect(outcome).toMatchObject({ kind: 'in_doubt', fence: { id: 'inv-2', state: 'calling', tool: 'open_claim', idempotency_key: 'inv-2:0', worker: 'worker-1' } });
  });

  it('concurrently, exactly one side wins, and a call is never made after an abandon', async () => {
    for (let i = 0; i < 20; i++) {
      const id = `race-${i}`;
      const reached: string[] = [];
      const [worker, api] = await Promise.all([workerCalls(id, reached).then(() => 'called', () => 'stopped'), invocationFences(store).abandon(id)]);
      if (api.kind === 'abandoned') {
        expect(worker).toBe('stopped');
        expect(reached).toEqual([]);
        expect((await docOf(id))?.state).toBe('abandoned');
      } else {
        expect(worker).toBe('called');
        expect(api.kind).toBe('in_doubt');
      }
    }
  });

  it('a plain invocation writes no fence; only the first state-changing call takes it', async () => {
    const journal = fencedJournal(transientJournal('inv-3'), invocationFences(store).of('inv-3'), 'w');
    expect(await docOf('inv-3')).toBeUndefined();
    const entry = { position: 0, idempotency_key: 'inv-3:0', tool: 't', provider_id: 'p', native_tool: 't', args_hash: 'h', state: 'started' as const, idempotent_keys: false, replays: 0, at: '', worker: 'w' };
    await journal.write(entry);
    await journal.write({ ...entry, state: 'answered' });
    await journal.write({ ...entry, position: 1, idempotency_key: 'inv-3:1' });
    expect(await docOf('inv-3')).toMatchObject({ state: 'calling', idempotency_key: 'inv-3:0' });
  });

  /** The worker's reservation of `invocationId`'s transaction under its hold (what the licence gate does). */
  const reserve = (invocationId: string) => store.counters.add('tx', 1, { once: invocationHold(invocationId, new Date()) });
  /** The worker's own release (Reservation.release under a hold). */
  const release = (invocationId: string) => store.counters.withdraw(invocationHold(invocationId, new Date()));

  it('a reserved transaction of a lost worker is given back by the api, once; the worker, should it wake, neither charges nor gives it back again', async () => {
    const fence = invocationFences(store).of('inv-4');
    await reserve('inv-4');
    await fence.reserved('tx');
    expect(await invocationFences(store).abandon('inv-4')).toEqual({ kind: 'abandoned' });
    expect(await store.counters.get('tx')).toBe(0);
    await expect(fence.committing(RESULT)).rejects.toThrow(/abandoned by its requester/);
    expect(await fence.releasing()).toBe('release');
    expect(await release('inv-4')).toBe('already');
    expect(await invocationFences(store).abandon('inv-4')).toEqual({ kind: 'abandoned' });
    expect(await store.counters.get('tx')).toBe(0);
  });

  it('a worker killed between its reservation and its fence: the api gives the transaction back all the same', async () => {
    // The window the multi-host burst found (41 charged for 40): reserved, then SIGKILL before the fence said so.
    await reserve('inv-7');
    expect(await store.counters.get('tx')).toBe(1);
    expect(await invocationFences(store).abandon('inv-7')).toEqual({ kind: 'abandoned' });
    expect(await store.counters.get('tx')).toBe(0);
    expect(await docOf('inv-7')).toMatchObject({ state: 'abandoned' });
  });

  it('a worker cut off until after the abandon: its reservation is refused, and nothing is charged', async () => {
    expect(await invocationFences(store).abandon('inv-8')).toEqual({ kind: 'abandoned' });
    expect(await reserve('inv-8')).toEqual({ value: 0, applied: false, repeated: true });
    await expect(invocationFences(store).of('inv-8').reserved('tx')).rejects.toThrow(/abandoned by its requester.*nothing was charged/);
    expect(await release('inv-8')).toBe('already');
    expect(await store.counters.get('tx')).toBe(0);
  });

  it('a worker killed at any point of its write, racing the abandon: charged exactly when the api answers from the fence', async () => {
    // Each worker stops for good after 1-3 of its steps (reserve, fence, commit), or lives and
    // settles (commits, or releases when the api got there first); the api abandons at a random moment. Whatever the interleaving, the
    // transactions left charged are exactly the answers the api takes from a committed fence.
    const pause = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));
    let answered = 0;
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const id = `race-${i}`;
        const diesAfter = i % 4; // 3: lives to the end
        const worker = async (): Promise<void> => {
          const fence = invocationFences(store).of(id);
          await pause();
          const reserved = await reserve(id);
          if (!reserved.applied || diesAfter === 0) return;
          try {
            await pause();
            await fence.reserved('tx');
            if (diesAfter === 1) return;
            await pause();
            await fence.committing(RESULT);
          } catch {
            if ((await fence.releasing()) === 'release') await release(id);
          }
        };
        const api = async () => {
          await pause();
          await pause();
          return invocationFences(store).abandon(id);
        };
        const [, outcome] = await Promise.all([worker(), api()]);
        if (outcome.kind === 'committed') answered++;
      }),
    );
    expect(await store.counters.get('tx')).toBe(answered);
  });

  it('a fence written by a worker of an earlier release (no hold): the api gives its transaction back directly', async () => {
    await store.counters.add('tx', 1);
    const fences = store.collection<InvocationFenceDoc>(INVOCATION_FENCES_COLLECTION, { ttlField: 'expires_at' });
    await fences.insert({ id: 'inv-9', state: 'reserved', counter: 'tx', at: new Date().toISOString(), expires_at: new Date(Date.now() + 60_000).toISOString() });
    expect(await invocationFences(store).abandon('inv-9')).toEqual({ kind: 'abandoned' });
    expect(await docOf('inv-9')).toMatchObject({ state: 'abandoned', released: true });
    expect(await store.counters.get('tx')).toBe(0);
  });

  it('a worker that committed before it was lost: the api answers its result, and the transaction stays charged', async () => {
    const fence = invocationFences(store).of('inv-5');
    await reserve('inv-5');
    await fence.reserved('tx');
    await fence.committing(RESULT);
    expect(await invocationFences(store).abandon('inv-5')).toEqual({ kind: 'committed', result: RESULT });
    expect(await store.counters.get('tx')).toBe(1);
  });

  it('a worker that failed and gave its transaction back: the api gives nothing back again', async () => {
    const fence = invocationFences(store).of('inv-6');
    await reserve('inv-6');
    await fence.reserved('tx');
    expect(await fence.releasing()).toBe('release');
    expect(await release('inv-6')).toBe('withdrawn');
    expect(await invocationFences(store).abandon('inv-6')).toEqual({ kind: 'abandoned' });
    expect(await store.counters.get('tx')).toBe(0);
  });
});
