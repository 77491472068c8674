import type { Store } from '@agent-platform/store';
import { startWebhookPeer, type WebhookPeer } from '@agent-platform/channels/testing';
import { newWebhookSecret, signWebhook } from '@agent-platform/net';
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
// removes every content of the agent, also what the crash left behind. The same for a channel's
// transcript (a webhook channel, a channel bridge): a worker SIGKILLed at `transcript.submitted`
// or `transcript.appended` leaves the message redelivered, answered, and in its transcript once.
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
  let peer: WebhookPeer;
  const secret = newWebhookSecret();

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 2,
      schedulers: 0,
      config: {
        agents: { session_max_turns: MAX_TURNS, invocation_timeout_secs: 60, claim_lease_secs: 2, rate_limit_per_minute: 100_000 },
        network: { allow_private_targets: true },
        // A message taken by a killed worker goes to another after 3 s instead of 5 minutes.
        channels: { inbound_redelivery_secs: 3 },
      },
    });
    api = fleet.urls[0]!;
    ({ token, agent } = await claimsIntakeOn(api));
    // A webhook channel to the agent, run by a channel bridge, for the transcripts.
    await fleet.add('channel-bridge');
    peer = await startWebhookPeer();
    const created = await call(api, 'POST', '/channels', { token, body: { id: 'web-long', kind: 'webhook', config: { secret, url: peer.url }, default_agent: agent } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await fleet?.close();
    await peer?.close();
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

  /**
   * What the shared store holds for the agent: the references of the session (or of the agent's
   * transcripts, with `transcripts`) and the contents of the same kind.
   */
  async function stored(transcripts = false): Promise<StoredView> {
    const store: Store = await fleet.openStore();
    type Holder = { id: string; turns: Array<{ content_ref?: string }> };
    try {
      const holders = transcripts
        ? (await store.collection<Holder & { agent_id: string }>('session_transcripts').find({ where: { agent_id: agent } })).map((t) => t.doc)
        : [(await store.collection<Holder>('sessions').get(agent))?.doc];
      const contents = await store.collection<{ id: string; agent_id: string; transcript?: string }>('session_contents').find({ where: { agent_id: agent } });
      return {
        refs: holders.flatMap((h) => (h?.turns ?? []).flatMap((t) => (t.content_ref === undefined ? [] : [t.content_ref]))).sort(),
        contents: contents.filter((c) => (c.doc.transcript !== undefined) === transcripts).map((c) => c.doc.id).sort(),
      };
    } finally {
      await store.close();
    }
  }

  /** Only a worker that stops at `point` runs while `during` starts its work; two fresh ones after the SIGKILL. */
  async function killAt(point: string, during: () => unknown): Promise<void> {
    for (const worker of fleet.workers) await worker.kill();
    const armed = await fleet.add('agent-worker', { AP_FAULT_STOP_AT: point });
    during();
    await waitUntil(() => armed.output().includes(`fault point ${point} reached`), {
      timeoutMs: 30_000,
      message: `the armed worker to stop at ${point}:\n${armed.output()}`,
    });
    await armed.kill();
    fleet.workers.splice(0, fleet.workers.length, await fleet.add('agent-worker'), await fleet.add('agent-worker'));
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
      const killed = long(`killed at ${point}`);
      let answer: ReturnType<typeof call> | undefined;
      await killAt(point, () => (answer = call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: killed } })));
      const res = await answer!;
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

  for (const point of ['transcript.submitted', 'transcript.appended'] as const) {
    it(`a channel message whose worker is SIGKILLed at ${point}: answered once redelivered, its transcript holds the two turns whole, once`, async () => {
      await waitUntil(async () => (await call(api, 'GET', '/channels/web-long', { token })).body.status === 'Connected', {
        timeoutMs: 15_000,
        message: `the channel Connected\n${fleet.logs()}`,
      });
      const id = `m-${point}`;
      const conversation = `conversation ${point}`;
      const text = long(`channel ${point}`);
      const body = JSON.stringify({ id, conversation, text });
      const inbound = () =>
        fetch(`${api}/channels/web-long/inbound`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signWebhook(secret, `w-${id}`, Math.floor(Date.now() / 1000), body) },
          body,
        }).then((res) => expect(res.status).toBe(202));
      let accepted: Promise<void> | undefined;
      await killAt(point, () => (accepted = inbound()));
      await accepted;
      await waitUntil(() => peer.received.some((r) => (r.body as { in_reply_to?: string }).in_reply_to === id), {
        timeoutMs: 30_000,
        message: `the reply to ${id}\n${fleet.logs()}`,
      });
      const transcript = await call(api, 'GET', `/agents/${agent}/transcripts/web-long?conversation=${encodeURIComponent(conversation)}`, { token });
      expect(transcript.status, JSON.stringify(transcript.body).slice(0, 300)).toBe(200);
      expect(transcript.body.turns.map((t: { role: string; content: string }) => [t.role, t.content])).toEqual([
        ['user', text],
        ['assistant', text],
      ]);
      await waitUntil(async () => {
        const view = await stored(true);
        return view.refs.length > 0 && JSON.stringify(view.refs) === JSON.stringify(view.contents);
      }, { timeoutMs: 10_000, message: 'the transcripts to refer to exactly the stored transcript contents' });
    }, 120_000);
  }
});
