import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsIntakeOn, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Issue 23, a long session in a fleet (1 api node, 2 agent workers over NATS, the shared store):
// a turn of 2 KiB or more is kept as a document of its own, the session document refers to it
// (docs/agents.md "Sessions"). Every model call gets the turns before it whole and in order,
// whichever worker wrote them; a worker SIGKILLed at either point of an append's life
// (`session.submitted`: written but not committed; `session.appended`: committed, the contents
// its window dropped not deleted yet) leaves a session whose every turn is there, and a reset
// removes every content of the agent, also what the crash left behind.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const MAX_TURNS = 6;

/** About 3.4 KB: kept apart (SEPARATE_CONTENT_BYTES is 2 KiB). */
const long = (tag: string): string => `${tag}: ${'The roof leaked over the kitchen of the insured house. '.repeat(64)}`;

interface StoredView {
  refs: string[];
  contents: string[];
}

describe.skipIf(natsBinary === null || redisBinary === null)('long session turns in a fleet', () => {
  let fleet: Fleet;
  let api: string;
  let token: string;
  let agent: string;

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 2,
      schedulers: 0,
      config: { agents: { session_max_turns: MAX_TURNS, invocation_timeout_secs: 60, claim_lease_secs: 2, rate_limit_per_minute: 100_000 } },
    });
    api = fleet.urls[0]!;
    ({ token, agent } = await claimsIntakeOn(api));
  }, 180_000);

  afterAll(async () => {
    await fleet?.close();
  });

  async function send(message: string): Promise<void> {
    const res = await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message } });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    expect(res.body.content).toBe(message);
  }

  /** The conversation the model was sent with `message` (the system prompt left out), newest last. */
  function contextOf(message: string): string[] {
    const recorded = fleet.provider.requests.filter((r) => {
      const messages = (r.body?.messages ?? []) as Array<{ role: string; content: string }>;
      return messages.at(-1)?.content === message;
    });
    expect(recorded.length, `the model calls with ${message.slice(0, 20)}`).toBeGreaterThan(0);
    const messages = (recorded.at(-1)!.body!.messages ?? []) as Array<{ role: string; content: string }>;
    return messages.filter((m) => m.role !== 'system').map((m) => m.content);
  }

  /** What the shared store holds for the agent: the session's references and the contents. */
  async function stored(): Promise<StoredView> {
    const store: Store = await fleet.openStore();
    try {
      const session = await store.collection<{ id: string; turns: Array<{ content_ref?: string }> }>('sessions').get(agent);
      const contents = await store.collection<{ id: string; agent_id: string }>('session_contents').find({ where: { agent_id: agent } });
      return {
        refs: (session?.doc.turns ?? []).flatMap((t) => (t.content_ref === undefined ? [] : [t.content_ref])).sort(),
        contents: contents.map((c) => c.doc.id).sort(),
      };
    } finally {
      await store.close();
    }
  }

  async function reset(): Promise<void> {
    expect((await call(api, 'POST', `/agents/${agent}/session/reset`, { token })).status).toBe(200);
    await waitUntil(async () => (await stored()).contents.length === 0, { timeoutMs: 10_000, message: "the agent's contents to be deleted by the reset" });
  }

  it('each model call gets the turns before it whole and in order, whichever worker wrote them; the session document refers to them', async () => {
    await reset();
    const turns: string[] = [];
    for (let i = 0; i < 6; i++) {
      const message = long(`conversation ${i}`);
      await send(message);
      expect(contextOf(message)).toEqual([...turns.slice(-MAX_TURNS), message]);
      turns.push(message, message);
    }
    // The window of 6 turns, all long: six references, and the contents dropped with the older turns deleted.
    await waitUntil(async () => {
      const view = await stored();
      return view.refs.length === MAX_TURNS && JSON.stringify(view.refs) === JSON.stringify(view.contents);
    }, { timeoutMs: 10_000, message: 'the session to refer to exactly the stored contents' });
  }, 120_000);

  for (const point of ['session.submitted', 'session.appended'] as const) {
    it(`a worker SIGKILLed at ${point}: answered by a re-dispatch, every turn of the session whole, and a reset removes every content`, async () => {
      await reset();
      for (let i = 0; i < 3; i++) await send(long(`before ${point} ${i}`));
      // Only the armed worker runs when the message is sent, so it is the one that takes it.
      for (const worker of fleet.workers) await worker.kill();
      const armed = await fleet.add('agent-worker', { AP_FAULT_STOP_AT: point });
      const killed = long(`killed at ${point}`);
      const answer = call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: killed } });
      await waitUntil(() => armed.output().includes(`fault point ${point} reached`), {
        timeoutMs: 30_000,
        message: `the armed worker to stop at ${point}:\n${armed.output()}`,
      });
      await armed.kill();
      fleet.workers.splice(0, fleet.workers.length, await fleet.add('agent-worker'), await fleet.add('agent-worker'));
      const res = await answer;
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
      expect(res.body.content).toBe(killed);

      // The workers started after the kill know of the session only what they read from the store.
      const after = long(`after ${point}`);
      await send(after);
      const context = contextOf(after);
      // Whole turns only: the dead worker's append is all there (it committed) or not at all (it did not).
      expect(context.every((text) => text === after || text === killed || text.startsWith('before '))).toBe(true);
      expect(context.filter((text) => text === killed)).toHaveLength(point === 'session.submitted' ? 2 : 4);
      expect(context).toHaveLength(MAX_TURNS + 1);

      const view = await stored();
      expect(view.refs.every((ref) => view.contents.includes(ref))).toBe(true);
      if (point === 'session.submitted') {
        // Nothing of the dead worker's append was committed: no content without a reference.
        await waitUntil(async () => JSON.stringify((await stored()).contents) === JSON.stringify((await stored()).refs), {
          timeoutMs: 10_000,
          message: 'the contents to be exactly the referred ones',
        });
      } else {
        // Committed, and killed before deleting what its window dropped: those stay, unreferenced, until a reset.
        expect(view.contents.filter((id) => !view.refs.includes(id)).length).toBeGreaterThan(0);
      }
      await reset();
    }, 120_000);
  }
});
