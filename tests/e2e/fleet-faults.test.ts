import { fileURLToPath } from 'node:url';
import { IDEMPOTENCY_COLLECTION, usageEventsLog, type IdempotencyRecord } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Faults in a fleet (1 api node, 2 agent workers, 2 schedulers), with exact counts. Pass means:
// every request gets a terminal answer (never a hang past the timeout), none is executed twice,
// nothing is lost, and service recovers within seconds. The model answers after 300 ms, so a
// burst keeps many invocations in flight on every worker when the fault strikes.
const CLAIMS_INTAKE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
/** `[agents] invocation_timeout_secs`: the api then waits 5 s more for a worker's answer. */
const TIMEOUT_SECS = 2;
/** The longest any request may take before its terminal answer: the api's wait plus slack for a loaded machine. */
const TERMINAL_MS = (TIMEOUT_SECS + 5) * 1000 + 5_000;

const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

function reply(request: RecordedRequest) {
  return { ...echoReply(request), delay_ms: 300 };
}

describe.skipIf(natsBinary === null || redisBinary === null)('fleet faults', () => {
  let fleet: Fleet;
  let api: string;
  let token: string;
  let agent: string;
  let store: Store | undefined;

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 2,
      schedulers: 2,
      reply,
      config: { agents: { invocation_timeout_secs: TIMEOUT_SECS, rate_limit_per_minute: 100_000 } },
    });
    api = fleet.urls[0]!;
    token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    const install = await call(api, 'POST', '/catalog/install', { token, body: { path: CLAIMS_INTAKE, activate: true } });
    agent = install.body.installed[2].id;
    store = await fleet.openStore();
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.close();
  });

  const usageTotal = async (): Promise<number> => (await call(api, 'GET', '/usage', { token })).body.total_requests;

  /** One invoke with its own idempotency key; resolves with the terminal answer and how long it took. */
  async function invoke(key: string): Promise<{ key: string; status: number; category: string | undefined; ms: number }> {
    const started = Date.now();
    const r = await call(api, 'POST', `/agents/${agent}/invoke`, {
      token,
      body: { source: 'Api', message: `${key}: hail damage to the roof`, correlation_id: key, idempotency_key: key },
    });
    return { key, status: r.status, category: r.body?.error?.category, ms: Date.now() - started };
  }

  /** A failed request is a clear error (Timeout, or Internal "no agent worker" / bus unavailable), never a hang. */
  function expectTerminal(answers: Array<{ status: number; category: string | undefined; ms: number }>): void {
    for (const a of answers) {
      expect(a.ms).toBeLessThan(TERMINAL_MS);
      if (a.status !== 200) {
        expect(a.status).toBe(500);
        expect(['Timeout', 'Internal']).toContain(a.category);
      }
    }
  }

  /** Retries a key until it answers 200 (fresh, or DuplicateInvocation if the lost attempt had finished). */
  async function retryUntilOk(key: string): Promise<void> {
    const deadline = Date.now() + 40_000;
    for (;;) {
      const again = await invoke(key);
      expectTerminal([again]);
      if (again.status === 200) return;
      if (Date.now() > deadline) throw new Error(`key ${key} still fails: ${again.category}`);
      // A client's backoff between retries, not a wait for a condition.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const burstCalls = (prefix: string): number => fleet.provider.requests.filter((r) => JSON.stringify(r.body).includes(`${prefix}-`)).length;

  it('kill -9 of a worker during a burst of 60: every request terminal, each key executed exactly once', async () => {
    const before = await usageTotal();
    const keys = Array.from({ length: 60 }, (_, i) => `burst-${i}`);
    const burst = Promise.all(keys.map((k) => invoke(k)));
    await waitUntil(() => burstCalls('burst') >= 20, { timeoutMs: 15_000, message: 'the burst to reach the model' });
    await fleet.workers[0]!.kill();

    const answers = await burst;
    expectTerminal(answers);
    const failed = answers.filter((a) => a.status !== 200);
    // The killed worker held invocations in flight: their callers got a Timeout, not silence.
    expect(failed.length).toBeGreaterThan(0);
    await Promise.all(failed.map((a) => retryUntilOk(a.key)));
    expect(await usageTotal()).toBe(before + 60);

    fleet.workers[0] = await fleet.add('agent-worker');
  });

  it('restart of nats-server during load: every request terminal, service back within seconds, nothing lost or doubled', async () => {
    const before = await usageTotal();
    const keys = Array.from({ length: 30 }, (_, i) => `load-${i}`);
    const load = Promise.all(keys.map((k) => invoke(k)));
    await waitUntil(() => burstCalls('load') >= 10, { timeoutMs: 15_000, message: 'the load to reach the model' });
    await fleet.nats.kill();
    await fleet.nats.restart();
    const restartedAt = Date.now();

    await retryUntilOk('probe-after-nats-restart');
    expect(Date.now() - restartedAt).toBeLessThan(5_000);
    const answers = await load;
    expectTerminal(answers);
    await Promise.all(answers.filter((a) => a.status !== 200).map((a) => retryUntilOk(a.key)));
    expect(await usageTotal()).toBe(before + keys.length + 1);
  });

  it('restart of redis-server with schedules pending: each slot fires once, the delayed fire is not lost', async () => {
    // A whole second, 4 s ahead: pending in Redis (a delayed job) when the server dies.
    const at = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000).toISOString();
    const create = async (body: object): Promise<string> => (await call(api, 'POST', '/cron/jobs', { token, body: { agent_id: agent, ...body } })).body.id;
    const beat = await create({ every_secs: 1, prompt: 'beat' });
    const once = await create({ at, prompt: 'once' });
    await waitUntil(async () => (await fires(store!, agent, beat)).length >= 2, { timeoutMs: 20_000, message: 'two beats before the crash' });

    await fleet.redis.kill();
    // Redis stays down across the `at` instant, so that fire is due while nothing can run it.
    await waitUntil(() => Date.now() > Date.parse(at) + 500, { timeoutMs: 10_000, message: 'the at instant to pass' });
    await fleet.redis.restart();
    const restartedAt = new Date().toISOString();

    await waitUntil(async () => (await fires(store!, agent, once)).length === 1, { timeoutMs: 20_000, message: `the delayed fire (${fleet.logs()})` });
    await waitUntil(async () => (await fires(store!, agent, beat)).some((r) => r.key.slice(-24) > restartedAt), {
      timeoutMs: 20_000,
      message: 'beats after the restart',
    });
    expect((await call(api, 'POST', `/schedules/${beat}/pause`, { token })).body).toEqual({ status: 'paused' });

    let settled = { records: [] as IdempotencyRecord[], cronEvents: -1 };
    await waitUntil(
      async () => {
        const records = [...(await fires(store!, agent, beat)), ...(await fires(store!, agent, once))];
        const events = await usageEventsLog(store!).list({ where: { agent_id: agent } });
        settled = { records, cronEvents: events.filter((e) => e.source === 'Cron').length };
        return records.every((r) => r.state === 'done') && settled.cronEvents === records.length;
      },
      { timeoutMs: 15_000, message: 'one usage event per fired slot' },
    );
    expect(settled.records.map((r) => r.key)).toContain(`cron:${once}:${at}`);
  });
});

/** The done or pending idempotency records of one schedule's fires: one per slot that ran. */
async function fires(store: Store, agentId: string, scheduleId: string): Promise<IdempotencyRecord[]> {
  const records = await store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' }).find({ where: { agent_id: agentId } });
  return records.map((v) => v.doc).filter((r) => r.key.startsWith(`cron:${scheduleId}:`));
}
