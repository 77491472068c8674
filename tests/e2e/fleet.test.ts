import { fileURLToPath } from 'node:url';
import { IDEMPOTENCY_COLLECTION, usageEventsLog, type IdempotencyRecord } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { createPackageShelf, requireBinary, waitUntil, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventStream } from '../../apps/platform/src/testing/platform-test-api.ts';
import { echoReply, pidOwningPort, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// README "Running a fleet", run as an operator would on one host: nats-server and redis-server,
// two api nodes (configs differing only in [server] listen), two agent workers and one
// scheduler, each started alone from its main, sharing the embedded store through one data_dir.
// The agent scenarios of the all-in-one tour go through BOTH api nodes; every piece of state a
// request leaves behind (keys, idempotency, budgets, rate limits, lockouts) must be the fleet's.
const CLAIMS_INTAKE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const POLICY_SERVICING = fileURLToPath(new URL('../../examples/policy-servicing', import.meta.url));
const BUDGET = 6;
const RATE_LIMIT = 60;

const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

/**
 * The default model: an echo, except a message starting `slow:` hangs long past any test step, and
 * one holding `pause:<ms>` answers after that long.
 */
function reply(request: RecordedRequest) {
  const answer = echoReply(request);
  const text = 'text' in answer ? (answer.text ?? '') : '';
  if (text.startsWith('slow:')) return { ...answer, delay_ms: 60_000 };
  const pause = /pause:(\d+)/.exec(text);
  return pause === null ? answer : { ...answer, delay_ms: Number(pause[1]) };
}

describe.skipIf(natsBinary === null || redisBinary === null)('a fleet: 2 api nodes, 2 agent workers, 1 scheduler', () => {
  let fleet: Fleet;
  let A: string;
  let B: string;
  let token: string;
  let agent: string;
  let store: Store | undefined;

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 2,
      workers: 2,
      schedulers: 1,
      reply,
      licence: { transaction_budgets: { fleet_budget: BUDGET } },
      config: {
        agents: { invocation_timeout_secs: 20, rate_limit_per_minute: RATE_LIMIT },
        // The first lockout lasts base_backoff_secs: long enough to be seen through the other node.
        auth: { rate_limit: { max_failed_attempts: 3, base_backoff_secs: 2, max_backoff_secs: 4 } },
        // The test process is the nodes' proxy: the lockout test names its own client address.
        server: { trusted_proxies: ['127.0.0.1'] },
      },
    });
    [A, B] = fleet.urls as [string, string];
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.close();
  });

  const usageTotal = async (base: string): Promise<number> => (await call(base, 'GET', '/usage', { token })).body.total_requests;

  it('bootstraps the first key once, whichever node is asked', async () => {
    const [a, b] = await Promise.all([
      call(A, 'POST', '/auth/keys', { body: { name: 'admin-a', role: 'admin' } }),
      call(B, 'POST', '/auth/keys', { body: { name: 'admin-b', role: 'admin' } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 401]);
    token = (a.status === 200 ? a : b).body.secret;
    expect((await call(A, 'GET', '/auth/whoami', { token })).status).toBe(200);
    expect((await call(B, 'GET', '/auth/keys', { token })).body.keys).toHaveLength(1);
  });

  it('installs an agent through one node; both nodes talk to it through the workers', async () => {
    const install = await call(A, 'POST', '/catalog/install', { token, body: { path: CLAIMS_INTAKE, activate: true } });
    expect(install.status).toBe(201);
    agent = install.body.installed[2].id;
    for (const base of [B, A]) {
      const message = `Water damage in the kitchen, reported via ${base}`;
      const sent = await call(base, 'POST', `/agents/${agent}/send`, { token, body: { message } });
      expect(sent.status).toBe(200);
      expect(sent.body.content).toBe(message);
    }
    expect((await call(B, 'GET', `/agents/${agent}`, { token })).body).toMatchObject({ state: 'Running', tasks_completed: 2 });
  });

  it('runs one idempotency key exactly once, with 20 callers split across both nodes', async () => {
    const before = await usageTotal(A);
    const body = { source: 'Api', message: 'FNOL for claim 9', correlation_id: 'c-9', idempotency_key: 'fleet-once' };
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 === 0 ? A : B, 'POST', `/agents/${agent}/invoke`, { token, body })));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    const fresh = replies.filter((r) => r.body.error === undefined);
    expect(fresh).toHaveLength(1);
    for (const r of replies.filter((x) => x.body.error !== undefined)) {
      expect(r.body.error).toMatchObject({ category: 'DuplicateInvocation', details: { result: fresh[0]!.body } });
    }
    expect(await usageTotal(B)).toBe(before + 1);
  });

  it('spends a transaction budget exactly, however the calls are spread over the nodes', async () => {
    const replies = await Promise.all(
      Array.from({ length: 2 * BUDGET }, (_, i) =>
        call(i % 2 === 0 ? A : B, 'POST', `/agents/${agent}/invoke`, {
          token,
          body: { source: 'Api', message: `claim ${i}`, correlation_id: `b-${i}`, idempotency_key: `budget-${i}`, workflow_type: 'fleet_budget' },
        }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(BUDGET);
    const refused = replies.filter((r) => r.status === 403);
    expect(refused).toHaveLength(BUDGET);
    for (const r of refused) expect(r.body.error.details.reason).toBe('transaction_budget_exhausted');
    const status = await call(B, 'GET', '/licence/status', { token });
    expect(status.body.transaction_utilization.fleet_budget).toEqual({ budget: BUDGET, used: BUDGET, remaining: 0 });
  });

  it('shares the per-agent rate limit: a window filled through one node is full on the other', async () => {
    const install = await call(B, 'POST', '/catalog/install', { token, body: { path: POLICY_SERVICING, activate: true } });
    expect(install.status).toBe(201);
    const limited = install.body.installed[0].id as string;
    const send = (base: string) => call(base, 'POST', `/agents/${limited}/send`, { token, body: { message: 'change my address' } });
    // The window is the clock minute: should it turn while this runs, fill the next one.
    for (let attempt = 0; ; attempt++) {
      const minute = Math.floor(Date.now() / 60_000);
      let full = false;
      while (!full) full = (await Promise.all(Array.from({ length: 10 }, () => send(A)))).some((r) => r.status === 429);
      const viaB = await send(B);
      if (Math.floor(Date.now() / 60_000) !== minute && attempt === 0) continue;
      expect(viaB.status).toBe(429);
      expect(viaB.body.error).toMatchObject({ category: 'RateLimited', details: { agent_id: limited, limit_per_minute: RATE_LIMIT } });
      break;
    }
  });

  it('shares authentication lockouts: failures on one node lock the client out of the other', async () => {
    // A client of its own (X-Forwarded-For from a trusted proxy), so no other test meets its lockout.
    const headers = { 'x-forwarded-for': '203.0.113.50' };
    const whoami = (base: string, bearer: string) => call(base, 'GET', '/auth/whoami', { token: bearer, headers });
    for (let i = 0; i < 4; i++) expect((await whoami(A, 'svc_sk_not-a-key')).status).toBe(401);
    const locked = await whoami(B, 'svc_sk_not-a-key-either');
    expect(locked.status).toBe(429);
    expect(locked.body.error.category).toBe('RateLimited');
    // The lockout throttles failed attempts only: the valid key works throughout, and other clients are not locked out.
    expect((await whoami(B, token)).status).toBe(200);
    expect((await call(B, 'GET', '/auth/whoami', { token: 'svc_sk_not-a-key', headers: { 'x-forwarded-for': '203.0.113.51' } })).status).toBe(401);
    await waitUntil(async () => (await whoami(B, 'svc_sk_not-a-key')).status === 401, { timeoutMs: 8_000, intervalMs: 100, message: 'the lockout to end' });
  });

  it('refuses a key revoked through one node on the other within a second', async () => {
    const issued = await call(A, 'POST', '/auth/keys', { token, body: { name: 'claims-bot', role: 'service' } });
    expect((await call(B, 'GET', '/auth/whoami', { token: issued.body.secret })).status).toBe(200);
    expect((await call(A, 'DELETE', `/auth/keys/${issued.body.id}`, { token })).status).toBe(200);
    const revokedAt = Date.now();
    const refused = await call(B, 'GET', '/auth/whoami', { token: issued.body.secret });
    expect(refused.status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  it('aborts an invocation on whichever worker holds it when the agent is suspended through the other node', async () => {
    const before = await usageTotal(A);
    const pending = call(A, 'POST', `/agents/${agent}/send`, { token, body: { message: 'slow: a long narrative of the loss' } });
    await waitUntil(() => fleet.provider.requests.some((r) => JSON.stringify(r.body).includes('slow: a long')), {
      timeoutMs: 10_000,
      message: 'the slow invocation to reach the model',
    });
    const suspendedAt = Date.now();
    expect((await call(B, 'POST', `/agents/${agent}/suspend`, { token })).status).toBe(200);
    const aborted = await pending;
    expect(Date.now() - suspendedAt).toBeLessThan(5_000);
    expect(aborted.status).toBe(500);
    expect(aborted.body.error).toMatchObject({ category: 'InvalidState', details: { reason: 'suspended' } });
    expect((await call(A, 'POST', `/agents/${agent}/activate`, { token })).status).toBe(200);
    expect(await usageTotal(B)).toBe(before);
  });

  it('runs a workflow started through one node while the other streams its events; its FanOut steps spread over both workers', async () => {
    const shelf = await createPackageShelf();
    try {
      const fan = Array.from({ length: 6 }, (_, i) => ({ name: `check-${i}`, agent: 'claims-intake', prompt: `pause:300 fan-${i} {{input}}`, mode: 'FanOut' }));
      const dir = await shelf.workflow('fleet-review', { steps: [...fan, { name: 'gather', agent: 'claims-intake', mode: 'Collect' }] });
      const install = await call(A, 'POST', '/catalog/install', { token, body: { path: dir } });
      expect(install.status, JSON.stringify(install.body)).toBe(201);
      const run = await call(A, 'POST', `/workflows/${install.body.installed[0].id}/run`, { token, body: { input: 'roof claim' } });
      expect(run.status).toBe(201);
      const events = parseEventStream((await call(B, 'GET', `/runs/${run.body.id}/events`, { token })).text);
      expect(events.at(-1)!.event).toBe('end');
      const final = JSON.parse(events.at(-1)!.data);
      expect(final.state).toBe('Completed');
      expect(final.output).toBe(fan.map((_, i) => `pause:300 fan-${i} roof claim`).join('\n\n---\n\n'));
      expect(events.filter((e) => e.event === 'step')).toHaveLength(7);
      // Which worker made each model call: the process holding the call's (kept-alive) connection.
      const pids = fleet.workers.map((w) => w.child.pid!);
      const callers = new Set<number | null>();
      for (const request of fleet.provider.requests.filter((r) => JSON.stringify(r.body).includes('roof claim'))) {
        callers.add(await pidOwningPort(pids, request.remotePort!));
      }
      expect([...callers].sort()).toEqual([...pids].sort());
    } finally {
      await shelf.close();
    }
  });

  it('cancels through one node a run whose step holds a model call on a worker: the call is dropped within a second', async () => {
    const shelf = await createPackageShelf();
    try {
      const dir = await shelf.workflow('fleet-cancel', { steps: [{ name: 'long', agent: 'claims-intake', prompt: 'slow: {{input}}' }, { name: 'after', agent: 'claims-intake' }] });
      const install = await call(A, 'POST', '/catalog/install', { token, body: { path: dir } });
      const run = await call(A, 'POST', `/workflows/${install.body.installed[0].id}/run`, { token, body: { input: 'cancel me' } });
      const inFlight = () => fleet.provider.requests.find((r) => JSON.stringify(r.body).includes('slow: cancel me'));
      await waitUntil(() => inFlight() !== undefined, { timeoutMs: 10_000, message: 'the step to reach the model' });
      const cancelled = await call(B, 'POST', `/runs/${run.body.id}/cancel`, { token });
      expect(cancelled.body.state).toBe('Failed');
      expect(cancelled.body.error).toMatch(/^cancelled by admin-[ab]$/);
      await waitUntil(() => inFlight()!.cancelled, { timeoutMs: 1_000, message: 'the model call to be dropped' });
      expect((await call(A, 'GET', `/runs/${run.body.id}`, { token })).body).toMatchObject({ state: 'Failed', step_results: [] });
    } finally {
      await shelf.close();
    }
  });

  it('suspends through one node a run whose step runs on a worker, and resumes it through the other', async () => {
    const shelf = await createPackageShelf();
    try {
      const dir = await shelf.workflow('fleet-pause', {
        steps: [
          { name: 'first', agent: 'claims-intake', prompt: 'pause:1500 first {{input}}' },
          { name: 'second', agent: 'claims-intake', prompt: 'second {{input}}' },
        ],
      });
      const install = await call(A, 'POST', '/catalog/install', { token, body: { path: dir } });
      const run = await call(A, 'POST', `/workflows/${install.body.installed[0].id}/run`, { token, body: { input: 'hold it' } });
      await waitUntil(() => fleet.provider.requests.some((r) => JSON.stringify(r.body).includes('first hold it')), { timeoutMs: 10_000, message: 'the first step to reach the model' });
      expect((await call(B, 'POST', `/runs/${run.body.id}/suspend`, { token })).body.state).toBe('Suspended');
      // The step in flight finishes and is checkpointed; the next one is not started.
      let seen = (await call(A, 'GET', `/runs/${run.body.id}`, { token })).body;
      await waitUntil(
        async () => {
          seen = (await call(A, 'GET', `/runs/${run.body.id}`, { token })).body;
          return seen.step_results.length === 1;
        },
        { timeoutMs: 10_000, message: 'the first step to be checkpointed' },
      );
      expect(seen.state).toBe('Suspended');
      expect(fleet.provider.requests.some((r) => JSON.stringify(r.body).includes('second pause:1500'))).toBe(false);
      expect((await call(A, 'POST', `/runs/${run.body.id}/resume`, { token })).body.state).toBe('Running');
      await waitUntil(async () => (await call(B, 'GET', `/runs/${run.body.id}`, { token })).body.state === 'Completed', { timeoutMs: 10_000, message: 'the resumed run to complete' });
      expect((await call(B, 'GET', `/runs/${run.body.id}`, { token })).body.output).toBe('second pause:1500 first hold it');
    } finally {
      await shelf.close();
    }
  });

  it('fires a schedule created through an api node once per slot (source Cron, key cron:<id>:<slot>)', async () => {
    store = await fleet.openStore();
    const created = await call(A, 'POST', '/cron/jobs', { token, body: { agent_id: agent, every_secs: 1, prompt: 'fleet heartbeat' } });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const snapshot = () => cronSnapshot(store!, agent, id);
    await waitUntil(async () => (await snapshot()).records.length >= 3, { timeoutMs: 20_000, message: 'three fired slots' });
    expect((await call(B, 'POST', `/schedules/${id}/pause`, { token })).body).toEqual({ status: 'paused' });

    // Settled: every slot's key is done and the usage log holds one Cron event per key.
    let last = await snapshot();
    await waitUntil(
      async () => {
        last = await snapshot();
        return last.records.every((r) => r.state === 'done') && last.cronEvents === last.records.length;
      },
      { timeoutMs: 15_000, message: `one usage event per fired slot (${fleet.logs()})` },
    );
    const slots = last.records.map((r) => r.key.slice(`cron:${id}:`.length)).sort();
    for (const [i, slot] of slots.entries()) {
      expect(new Date(slot).getUTCMilliseconds()).toBe(0);
      if (i > 0) expect(Date.parse(slot) - Date.parse(slots[i - 1]!)).toBeGreaterThanOrEqual(1_000);
    }
    for (const record of last.records) {
      const slot = record.key.slice(`cron:${id}:`.length);
      expect(record.result?.source).toEqual({ Cron: { schedule_id: id, expression: 'every 1s', scheduled_at: slot } });
    }
  });
});

/** The idempotency records of one schedule's fires, and the agent's Cron usage events. */
async function cronSnapshot(store: Store, agentId: string, scheduleId: string): Promise<{ records: IdempotencyRecord[]; cronEvents: number }> {
  const records = (await store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' }).find({ where: { agent_id: agentId } }))
    .map((v) => v.doc)
    .filter((r) => r.key.startsWith(`cron:${scheduleId}:`));
  const events = await usageEventsLog(store).list({ where: { agent_id: agentId } });
  return { records, cronEvents: events.filter((e) => e.source === 'Cron').length };
}
