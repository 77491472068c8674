import { gate, requireBinary, waitUntil, type FakeReply, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsIntakeOn, echoReply, pidOwningPort, startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Issue 22 item 3 in a fleet (1 api node, 2 agent workers over NATS): a dead worker's invocations
// are sent again and answered, not failed; a worker stalled past its requester's patience neither
// charges nor answers (docs/invocation.md "A worker that dies"). The invokes carry a workflow type,
// so each is one licence transaction (GET /licence/status); every invocation, send or invoke, is
// one usage event (GET /usage). Both are compared with the answers the callers got.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

let held = gate();
const WORKFLOW_TYPE = 'fleet_redispatch';

/** The model: an echo; `hold:` messages wait until the test opens `held`. */
function reply(recorded: RecordedRequest): FakeReply {
  const answer = echoReply(recorded);
  const text = 'text' in answer ? (answer.text ?? '') : '';
  return text.startsWith('hold:') ? { ...answer, hold: held.promise } : answer;
}

describe.skipIf(natsBinary === null || redisBinary === null)('re-dispatch of invocations whose worker is lost, in a fleet', () => {
  let fleet: Fleet;
  let api: string;
  let token: string;
  let agent: string;

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 2,
      schedulers: 0,
      reply,
      // A 2 s claim lease: a keyed invocation of a dead worker is taken over 2 s after its last renewal.
      // Slots for the whole burst on one worker: NATS may hand either worker more than half of it,
      // and every model call is held until the kill.
      config: { agents: { invocation_timeout_secs: 60, claim_lease_secs: 2, rate_limit_per_minute: 100_000, worker_concurrency: 256 } },
    });
    api = fleet.urls[0]!;
    ({ token, agent } = await claimsIntakeOn(api));
    // Warm: a first send and invoke through each worker before the bursts.
    for (let i = 0; i < 4; i++) {
      expect((await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: `warm ${i}` } })).body.content).toBe(`warm ${i}`);
      const body = { source: 'Api', message: `warm invoke ${i}`, correlation_id: `warm-${i}`, idempotency_key: `warm-${i}`, workflow_type: WORKFLOW_TYPE };
      expect((await call(api, 'POST', `/agents/${agent}/invoke`, { token, body })).body.content).toBe(`warm invoke ${i}`);
    }
  }, 180_000);

  afterAll(async () => {
    held.open();
    await fleet?.close();
  });

  /** Licence transactions of the invokes' workflow type committed so far. */
  const transactions = async (): Promise<number> =>
    ((await call(api, 'GET', '/licence/status', { token })).body.transaction_utilization[WORKFLOW_TYPE]?.used as number | undefined) ?? 0;
  const usageTotal = async (): Promise<number> => (await call(api, 'GET', '/usage', { token })).body.total_requests;
  const modelCalls = (message: string) => fleet.provider.requests.filter((r) => (r.body?.messages as Array<{ content: string }> | undefined)?.at(-1)?.content === message);

  /** `count` sends (no key) and `count` invokes (each its own key), every model call held; each resolves with its message and answer. */
  function burst(prefix: string, count: number) {
    const sends = Array.from({ length: count }, (_, i) => {
      const message = `hold: ${prefix} send ${i}`;
      return call(api, 'POST', `/agents/${agent}/send`, { token, body: { message } }).then((res) => ({ message, res }));
    });
    const invokes = Array.from({ length: count }, (_, i) => {
      const message = `hold: ${prefix} invoke ${i}`;
      const body = { source: 'Api', message, correlation_id: `${prefix}-${i}`, idempotency_key: `${prefix}-${i}`, workflow_type: WORKFLOW_TYPE };
      return call(api, 'POST', `/agents/${agent}/invoke`, { token, body }).then((res) => ({ message, res }));
    });
    return { messages: [...Array.from({ length: count }, (_, i) => `hold: ${prefix} send ${i}`), ...Array.from({ length: count }, (_, i) => `hold: ${prefix} invoke ${i}`)], answers: Promise.all([...sends, ...invokes]) };
  }

  /** Every caller answered 200 with its own content (the echo of its message), none a DuplicateInvocation. */
  function expectAllAnswered(answers: Array<{ message: string; res: { status: number; body: { content?: string } } }>): void {
    for (const { message, res } of answers) {
      expect(res.status, `${message}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.content).toBe(message);
    }
  }

  /**
   * Waits until every message reached the model (a worker starved past 3 s by the machine's load
   * may already have been sent again); fails, with what is missing, after 60 s.
   */
  async function reachedModel(messages: string[], answers: Promise<Array<{ message: string; res: { status: number; body: unknown } }>>): Promise<void> {
    const deadline = Date.now() + 60_000;
    let all: Array<{ message: string; res: { status: number; body: unknown } }> | null = null;
    void answers.then((a) => (all = a));
    for (;;) {
      const missing = messages.filter((m) => modelCalls(m).length === 0);
      if (missing.length === 0) return;
      if (all !== null || Date.now() > deadline) {
        throw new Error(`${missing.length} of ${messages.length} never reached the model (${missing.slice(0, 3).join(', ')}); answered: ${JSON.stringify(all)?.slice(0, 1500)}\n${fleet.logs().slice(-3000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The messages whose (first) model call was made by `worker`. */
  async function heldBy(worker: AppProcess, messages: string[]): Promise<string[]> {
    const mine: string[] = [];
    for (const message of messages) {
      const port = modelCalls(message)[0]?.remotePort;
      if (port !== undefined && (await pidOwningPort([worker.child.pid!], port)) === worker.child.pid) mine.push(message);
    }
    return mine;
  }

  it('(a) SIGKILL of one of two workers during a burst of 60 sends and 60 keyed invokes: every caller answered 200, one transaction each', async () => {
    held = gate();
    const [transactionsBefore, usageBefore] = [await transactions(), await usageTotal()];
    const { messages, answers } = burst('a', 60);
    await reachedModel(messages, answers);
    const victim = fleet.workers[0]!;
    const lost = await heldBy(victim, messages);
    expect(lost.length).toBeGreaterThan(0);
    await victim.kill();
    const killedAt = Date.now();
    fleet.workers[0] = await fleet.add('agent-worker');
    // The survivor's calls answer now; the victim's are sent again once the api notices (3 to 4 s),
    // the keyed ones run once the dead owner's claim lapses (2 s).
    held.open();
    const all = await answers;
    const tookMs = Date.now() - killedAt;
    expectAllAnswered(all);
    for (const message of lost) expect(modelCalls(message).length, message).toBeGreaterThanOrEqual(2);
    expect(await transactions()).toBe(transactionsBefore + 60);
    expect(await usageTotal()).toBe(usageBefore + 120);
    // The requests' own audit entries, appended by the workers with their answers (docs/audit.md
    // "Who writes an entry"): every request has one; one whose worker was killed after committing
    // may have a second (the re-dispatch's), never none.
    const entries: Array<{ result: string; metadata: { request_id?: string } }> = (await call(api, 'GET', '/security/audit?category=request&limit=1000', { token })).body.entries;
    const entriesOf = (id: string) => entries.filter((e) => e.metadata.request_id === id);
    for (const { message, res } of all) {
      const mine = entriesOf(res.headers['x-request-id']!);
      expect(mine.length, message).toBeGreaterThanOrEqual(1);
      expect(mine.length, message).toBeLessThanOrEqual(lost.includes(message) ? 2 : 1);
      expect(mine.map((e) => e.result)).toEqual(mine.map(() => '200'));
    }
    console.info(`(a) ${lost.length} of 120 invocations were on the killed worker; all answered ${tookMs} ms after the kill`);
  }, 120_000);

  it('(b) a worker SIGSTOPped with invocations until the api sent them again, then SIGCONTed: it charges nothing and answers nothing', async () => {
    held = gate();
    const [transactionsBefore, usageBefore] = [await transactions(), await usageTotal()];
    const { messages, answers } = burst('b', 10);
    await reachedModel(messages, answers);
    const stalled = fleet.workers[0]!;
    const mine = await heldBy(stalled, messages);
    expect(mine.length).toBeGreaterThan(0);
    process.kill(stalled.child.pid!, 'SIGSTOP');
    const stoppedAt = Date.now();
    // The stalled worker's model calls are answered into its socket; it reads them only once resumed.
    held.open();
    // The api notices the silence and sends them again. NATS still counts the stalled worker in the
    // queue group (its connection is up), so a re-dispatch may land on it again: after MAX_REDISPATCHES such,
    // the caller gets worker_lost (an error, never charged). Most land on the other worker.
    const all = await answers;
    const ok = all.filter((a) => a.res.status === 200);
    expectAllAnswered(ok);
    const failed = all.filter((a) => a.res.status !== 200);
    for (const f of failed) expect(f.res.body, f.message).toMatchObject({ error: { category: 'Internal', details: { reason: 'worker_lost' } } });
    for (const f of failed) expect(mine).toContain(f.message);
    const answeredMs = Date.now() - stoppedAt;

    process.kill(stalled.child.pid!, 'SIGCONT');
    // It must see that its requester gave up on every invocation it held (and on any re-dispatch
    // NATS handed it while it was stopped).
    const abandoned = (): number => stalled.output().split('\n').filter((l) => l.includes('abandoned by its requester')).length;
    await waitUntil(() => abandoned() >= mine.length, { timeoutMs: 20_000, message: `the stalled worker to abandon its ${mine.length} invocations:\n${stalled.output()}` });
    // Settled: nothing more is charged after a moment.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const okInvokes = ok.filter((a) => a.message.includes(' invoke ')).length;
    expect(await transactions()).toBe(transactionsBefore + okInvokes);
    expect(await usageTotal()).toBe(usageBefore + ok.length);
    // Still a good worker: it takes new work.
    for (let i = 0; i < 4; i++) expect((await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: `after ${i}` } })).body.content).toBe(`after ${i}`);
    console.info(`(b) ${mine.length} of 20 invocations were on the stalled worker; ${ok.length} answered 200, ${failed.length} worker_lost, ${answeredMs} ms after the stop; it logged ${abandoned()} abandoned invocations`);
  }, 120_000);

  it('(c) a worker SIGKILLed between its licence reservation and its fence: the api gives the transaction back, the invocation answered and charged once', async () => {
    const before = await transactions();
    // Only the armed worker runs when the invocation is sent, so it is the one that takes it.
    for (const worker of fleet.workers) await worker.kill();
    const armed = await fleet.add('agent-worker', { AP_FAULT_STOP_AT: 'invocation.transaction_reserved' });
    const body = { source: 'Api', message: 'reserved then killed', correlation_id: 'c-reserved', workflow_type: WORKFLOW_TYPE };
    const answer = call(api, 'POST', `/agents/${agent}/invoke`, { token, body });
    await waitUntil(() => armed.output().includes('fault point invocation.transaction_reserved reached'), {
      timeoutMs: 30_000,
      message: `the armed worker to stop at its reservation:\n${armed.output()}`,
    });
    // Stopped right after its reservation: the transaction is taken, and nothing else says so.
    expect(await transactions()).toBe(before + 1);
    await armed.kill();
    fleet.workers.splice(0, fleet.workers.length, await fleet.add('agent-worker'), await fleet.add('agent-worker'));
    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.content).toBe('reserved then killed');
    // The dead worker's transaction given back by the api, the re-dispatch's charged: one in all.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await transactions()).toBe(before + 1);
    expect(modelCalls('reserved then killed')).toHaveLength(1);
  }, 120_000);
});
