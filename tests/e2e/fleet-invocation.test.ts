import { request } from 'node:http';
import { gate, requireBinary, waitUntil, type FakeReply, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsIntakeOn, echoReply, pidOwningPort, startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Issue "Hardening" 2, 7 and 8 in a fleet: the api node, the agent workers and the model are
// separate processes, NATS carries the invocations with its default 1 MiB max_payload.
// - a reply too large for the bus is answered SizeLimitExceeded at once and never charged;
// - a client that disconnects cancels its invocation on whichever worker runs it;
// - repeats of an idempotency key wait on any worker without a slot and wake when it settles,
//   also when the owner's worker is killed with SIGKILL (its caller's invocation is then sent again).
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

const MiB = 1024 * 1024;
const TIMEOUT_SECS = 6;

let held = gate();

/** The model: an echo; `big:` answers 1.5 MiB; `hold:` waits until the test releases `held`. */
function reply(recorded: RecordedRequest): FakeReply {
  const answer = echoReply(recorded);
  const text = 'text' in answer ? (answer.text ?? '') : '';
  if (text.startsWith('big:')) return { text: 'b'.repeat(1.5 * MiB) };
  if (text.startsWith('hold:')) return { ...answer, hold: held.promise };
  return answer;
}

describe.skipIf(natsBinary === null || redisBinary === null)('a fleet: invocation limits, cancellation and idempotency across processes', () => {
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
      // A message may be larger than the bus carries: the bus refuses it, not the message limit.
      config: { agents: { invocation_timeout_secs: TIMEOUT_SECS, max_message_bytes: 4 * MiB } },
    });
    api = fleet.urls[0]!;
    ({ token, agent } = await claimsIntakeOn(api));
  }, 180_000);

  afterAll(async () => {
    held.open();
    await fleet?.close();
  });

  const usage = async () => (await call(api, 'GET', '/usage', { token })).body;
  const modelCalls = (prefix: string) => fleet.provider.requests.filter((r) => JSON.stringify(r.body?.messages?.at(-1) ?? '').includes(prefix));

  it('answers a reply too large for NATS with SizeLimitExceeded at once, and charges nothing', async () => {
    const before = await usage();
    const started = Date.now();
    const res = await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: 'big: the full claim file' } });
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ category: 'SizeLimitExceeded', message: expect.stringContaining('nothing was charged') });
    // Not the bus timeout the caller used to wait for (invocation timeout + 5 s).
    expect(Date.now() - started).toBeLessThan(TIMEOUT_SECS * 1000);
    expect(modelCalls('big: the full claim file')).toHaveLength(1);
    expect(await usage()).toEqual(before);
    // The worker is fine: the next call answers.
    expect((await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: 'small one' } })).body.content).toBe('small one');
  });

  it('refuses with 413 a message that fits the message limit but not the bus, before any worker sees it', async () => {
    const res = await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: `long: ${'m'.repeat(2 * MiB)}` } });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ category: 'SizeLimitExceeded', message: expect.stringContaining('maximum payload') });
    expect(modelCalls('long: ')).toHaveLength(0);
    // The api said so at boot: its message limit does not fit the bus.
    expect(fleet.apis[0]!.output()).toContain("does not fit the message bus's maximum payload");
  });

  it('cancels the invocation on the worker when its client disconnects: the model call stops, nothing is charged', async () => {
    const before = await usage();
    const errorsBefore = (await call(api, 'GET', `/agents/${agent}`, { token })).body.invocation_metrics.error_count;
    const url = new URL(api);
    const payload = JSON.stringify({ message: 'hold: cancel me' });
    const req = request({
      hostname: url.hostname,
      port: url.port,
      path: `/agents/${agent}/send`,
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    req.on('error', () => undefined);
    req.end(payload);
    await waitUntil(() => modelCalls('hold: cancel me').length === 1, { timeoutMs: 10_000, message: 'the call reaching the model' });
    req.destroy();
    // Well before the invocation timeout would have stopped it anyway.
    await waitUntil(() => modelCalls('hold: cancel me')[0]!.cancelled, { timeoutMs: (TIMEOUT_SECS * 1000) / 2, message: 'the model call to be cancelled' });
    await waitUntil(async () => (await call(api, 'GET', `/agents/${agent}`, { token })).body.invocation_metrics.error_count === errorsBefore + 1, {
      message: 'the cancelled invocation to be counted',
    });
    expect(await usage()).toEqual(before);
  });

  it('lets repeats of a running key wait on any worker, then answers them all with its result', async () => {
    held = gate();
    const body = { source: 'Api', message: 'hold: claim 31', correlation_id: 'c-31', idempotency_key: 'fleet-wait' };
    const first = call(api, 'POST', `/agents/${agent}/invoke`, { token, body });
    await waitUntil(() => modelCalls('hold: claim 31').length === 1, { timeoutMs: 10_000, message: 'the first call reaching the model' });
    const repeats = Array.from({ length: 6 }, () => call(api, 'POST', `/agents/${agent}/invoke`, { token, body }));
    // The repeats hold no slot: other work still runs on both workers meanwhile.
    for (let i = 0; i < 4; i++) expect((await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: `other ${i}` } })).status).toBe(200);
    held.open();
    const [original, ...others] = await Promise.all([first, ...repeats]);
    expect(original.body).toMatchObject({ content: 'hold: claim 31' });
    for (const r of others) expect(r.body.error).toMatchObject({ category: 'DuplicateInvocation', details: { result: original.body } });
    expect(modelCalls('hold: claim 31')).toHaveLength(1);
  });

  it('after a SIGKILL of the worker running a key, its caller is answered by a re-dispatch, not worker_lost, and the key runs exactly once', async () => {
    held = gate();
    const before = (await usage()).total_requests;
    const body = { source: 'Api', message: 'hold: claim 32', correlation_id: 'c-32', idempotency_key: 'fleet-kill' };
    const answered = (p: Promise<Awaited<ReturnType<typeof call>>>) => p.then((res) => ({ res, at: Date.now() }));
    const first = answered(call(api, 'POST', `/agents/${agent}/invoke`, { token, body }));
    await waitUntil(() => modelCalls('hold: claim 32').length === 1, { timeoutMs: 10_000, message: 'the first call reaching the model' });
    const repeat = answered(call(api, 'POST', `/agents/${agent}/invoke`, { token, body }));
    const owner = await workerHolding(fleet, 'hold: claim 32');
    await owner.kill();
    const replacement = await fleet.add('agent-worker');
    expect(replacement.child.pid).not.toBe(owner.child.pid);
    fleet.workers[fleet.workers.indexOf(owner)] = replacement;
    held.open();
    // The api notices the dead owner from the missing heartbeats (3 to 4 s) and sends the invocation
    // again under its key; the next run takes the key once the dead owner's claim lapses
    // ([agents] claim_lease_secs, 5 s), unless what is left of the caller's TIMEOUT_SECS runs out
    // first (then a Timeout). The repeat waits on the key the same way. Never worker_lost.
    for (const waited of [await first, await repeat]) {
      if (waited.res.body.error?.category === 'Timeout') expect(waited.res.body.error.message).toMatch(/exceeded/);
      else expect(waited.res.body.content ?? waited.res.body.error?.details?.result?.content, JSON.stringify(waited.res.body)).toBe('hold: claim 32');
    }
    let retried: Awaited<ReturnType<typeof call>> | undefined;
    await waitUntil(
      async () => {
        retried = await call(api, 'POST', `/agents/${agent}/invoke`, { token, body });
        return retried.status === 200;
      },
      { timeoutMs: 20_000, intervalMs: 500, message: 'a retry of the key to run' },
    );
    expect(retried!.body.content ?? retried!.body.error?.details?.result?.content).toBe('hold: claim 32');
    expect((await usage()).total_requests).toBe(before + 1);
    const again = await call(api, 'POST', `/agents/${agent}/invoke`, { token, body });
    expect(again.body.error).toMatchObject({ category: 'DuplicateInvocation' });
  });

  it('a SIGKILL of a worker during a burst: each of its callers is answered by a re-dispatch, the other worker\'s finish', async () => {
    held = gate();
    const before = (await usage()).total_requests;
    const sends = Array.from({ length: 40 }, (_, i) =>
      call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: `hold: burst ${i}` } }).then((res) => ({ res, i, at: Date.now() })),
    );
    await waitUntil(() => modelCalls('hold: burst').length === 40, { timeoutMs: 15_000, message: 'the burst to reach the model' });
    const victim = await workerHolding(fleet, 'hold: burst');
    await victim.kill();
    const killedAt = Date.now();
    held.open();
    const all = await Promise.all(sends);
    for (const a of all) expect(a.res.body.content, JSON.stringify(a.res.body)).toBe(`hold: burst ${a.i}`);
    // The victim's calls were sent again (a second model call each), within seconds of the kill.
    const again = Array.from({ length: 40 }, (_, i) => modelCalls(`hold: burst ${i}"`).length).filter((n) => n === 2).length;
    expect(again).toBeGreaterThan(0);
    expect(Math.max(...all.map((a) => a.at)) - killedAt).toBeLessThan(10_000);
    expect((await usage()).total_requests).toBe(before + 40);
    fleet.workers[fleet.workers.indexOf(victim)] = await fleet.add('agent-worker');
  });
});

/** The worker process that made the model call `prefix`: the one owning its client port. */
async function workerHolding(fleet: Fleet, prefix: string): Promise<AppProcess> {
  const recorded = fleet.provider.requests.find((r) => JSON.stringify(r.body?.messages?.at(-1) ?? '').includes(prefix));
  if (recorded?.remotePort === undefined) throw new Error(`no model call ${prefix}`);
  const pid = await pidOwningPort(fleet.workers.map((w) => w.child.pid!), recorded.remotePort);
  const worker = fleet.workers.find((w) => w.child.pid === pid);
  if (worker === undefined) throw new Error(`no worker process owns port ${recorded.remotePort}`);
  return worker;
}
