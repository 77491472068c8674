import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  gate,
  requireBinary,
  startOtlpCollector,
  startWebhookReceiver,
  traceTree,
  waitUntil,
  type CollectedSpan,
  type FakeReply,
  type OtlpCollector,
  type RecordedRequest,
  type WebhookReceiver,
} from '@agent-platform/testkit';
import { requireStarlark } from '@agent-platform/starlark/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidOwningPort, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';
import { payoutModel, spanNamed, writeTracedPackages } from '../support/traced-agent.ts';

// Issue 14 item 3 in a fleet: the api node, two agent workers and a scheduler are separate
// processes on NATS and Redis; each exports its spans to an OTLP collector running in this test.
// One request is one trace across the processes (W3C trace context in NATS headers and BullMQ job
// data); a worker SIGKILLed mid-invocation leaves the retried request a complete trace; a collector
// that is down costs spans, never a process.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
// The agent's tool is a starlark skill (tests/support/traced-agent.ts): no interpreter, no agent.
const starlark = requireStarlark('the fleet tracing tests (their agent calls a starlark skill)');

let held = gate();

/** `hold:` waits for the test to open the gate; everything else as the payout model answers. */
function model(request: RecordedRequest): FakeReply {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  const user = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  if (user.startsWith('hold:')) return { text: user, hold: held.promise };
  return payoutModel(request);
}

const traceId = (n: number): string => `${'a'.repeat(31)}${n}`;
const traceparent = (n: number): string => `00-${traceId(n)}-00f067aa0ba902b7-01`;

describe.skipIf(!starlark || natsBinary === null || redisBinary === null)('tracing across a fleet', () => {
  let dir: string;
  let collector: OtlpCollector;
  let receiver: WebhookReceiver;
  let fleet: Fleet;
  let api: string;
  let token: string;
  let agent: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-fleet-tracing-'));
    [collector, receiver] = await Promise.all([startOtlpCollector(), startWebhookReceiver()]);
    fleet = await startFleet({
      apis: 1,
      workers: 2,
      schedulers: 1,
      reply: model,
      config: {
        telemetry: { otlp_endpoint: collector.url, export_interval_ms: 100 },
        network: { allow_private_targets: true },
        agents: { invocation_timeout_secs: 20 },
      },
    });
    api = fleet.urls[0]!;
    token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    const packages = await writeTracedPackages(dir);
    for (const path of [packages.competency, packages.agent]) {
      const installed = await call(api, 'POST', '/catalog/install', {
        token,
        body: { path, activate: true },
      });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    }
    agent = (await call(api, 'GET', '/agents', { token })).body.agents.find(
      (a: { name: string }) => a.name === 'adjuster',
    ).id;
  }, 180_000);

  afterAll(async () => {
    held.open();
    await fleet?.close();
    await Promise.all([collector?.close(), receiver?.close()]);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const spansOf = (id: string): CollectedSpan[] => collector.spans.filter((s) => s.traceId === id);
  const send = (message: string, trace: number) =>
    fetch(`${api}/agents/${agent}/send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        traceparent: traceparent(trace),
      },
      body: JSON.stringify({ message }),
    });
  const waitForSpans = (id: string, names: string[], message: string) =>
    waitUntil(() => names.every((name) => spansOf(id).some((s) => s.name === name)), {
      timeoutMs: 20_000,
      message: `${message} (have: ${spansOf(id)
        .map((s) => `${s.service}:${s.name}`)
        .join(', ')})`,
    });

  it('follows a send from the api node over NATS to a worker, its model and tool calls, and on to the webhook delivery its event causes', async () => {
    const hook = await call(api, 'POST', '/webhooks', {
      token,
      body: { agent_id: agent, url: `${receiver.url}/hook` },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const res = await send('payout: a 8000 loss with a 500 deductible', 1);
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');

    await waitForSpans(
      traceId(1),
      [
        'POST /agents/:id/send',
        'process agents.invoke',
        'invoke_agent',
        'execute_tool claim_payout',
        'webhook.deliver',
        // A span is exported when it ends, and the event's spans may end after the delivery's.
        'publish platform.events',
        'process platform.events',
        'process webhook-deliveries',
      ],
      'the spans of the send and its webhook',
    );
    // Each process exports in batches: the fan-out's own consumer span (the delivery job's parent)
    // can reach the collector after the spans named above (two processes consume platform.events).
    await waitUntil(
      () => {
        const spans = traceTree(collector.spans, traceId(1));
        const delivery = spans.spans.find((s) => s.name === 'webhook.deliver');
        return delivery !== undefined && spans.ancestors(delivery).some((s) => s.name === 'invoke_agent');
      },
      { timeoutMs: 20_000, message: "the webhook delivery's spans linked up to the invocation" },
    ).catch(() => undefined);
    const tree = traceTree(collector.spans, traceId(1));
    const http = spanNamed(tree.spans, 'POST /agents/:id/send');
    const invocation = spanNamed(tree.spans, 'invoke_agent');
    const chat = spanNamed(tree.spans, 'chat m');
    const tool = spanNamed(tree.spans, 'execute_tool claim_payout');
    const delivery = spanNamed(tree.spans, 'webhook.deliver');
    expect(http.service).toBe('api');
    expect(spanNamed(tree.spans, 'send agents.invoke').service).toBe('api');
    for (const span of [spanNamed(tree.spans, 'process agents.invoke'), invocation, chat, tool, delivery])
      expect(span.service, span.name).toBe('agent-worker');
    // Parentage across the process boundary: the worker's spans hang under the api's.
    expect(tree.ancestors(chat)).toEqual(expect.arrayContaining([invocation, http]));
    expect(tree.ancestors(tool)).toContain(invocation);
    // The event went over JetStream (platform.events) and the delivery over BullMQ, still this trace.
    expect(tree.ancestors(delivery).map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'process webhook-deliveries',
        'process platform.events',
        'publish platform.events',
        'invoke_agent',
      ]),
    );
    expect(delivery.attributes).toMatchObject({
      'webhook.outcome': 'delivered',
      'webhook.event.kind': 'invocation.completed',
    });
    for (const span of [http, invocation, chat, tool, delivery])
      expect(span.attributes.correlation_id, span.name).toBe(requestId);
    expect(receiver.requests).toHaveLength(1);
    const removed = await call(api, 'DELETE', `/webhooks/${hook.body.id}`, { token });
    expect(removed.status).toBeLessThan(300);
  });

  it("follows a schedule fire from the scheduler to the worker's model call, keyed by the slot", async () => {
    const at = new Date(Math.ceil((Date.now() + 2_000) / 1000) * 1000).toISOString();
    const created = await call(api, 'POST', '/cron/jobs', {
      token,
      body: { agent_id: agent, at, prompt: 'scheduled check' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = `cron:${created.body.id}:${at}`;
    await waitUntil(
      () => collector.spans.some((s) => s.name === 'schedule.fire' && s.attributes.correlation_id === key),
      { timeoutMs: 20_000, message: 'the fire span' },
    );
    const fire = collector.spans.find(
      (s) => s.name === 'schedule.fire' && s.attributes.correlation_id === key,
    )!;
    await waitForSpans(fire.traceId, ['chat m', 'process schedules'], "the fire's model call");
    const tree = traceTree(collector.spans, fire.traceId);
    expect(fire.service).toBe('scheduler');
    expect(tree.parentOf(fire)?.name).toBe('process schedules');
    const chat = spanNamed(tree.spans, 'chat m');
    expect(chat.service).toBe('agent-worker');
    expect(tree.ancestors(chat)).toContain(fire);
    expect(spanNamed(tree.spans, 'invoke_agent').attributes).toMatchObject({
      'invocation.source': 'Cron',
      correlation_id: key,
    });
  });

  it('gives an invocation whose worker was SIGKILLed one trace, answered by the surviving worker it was sent again to', async () => {
    held = gate();
    const pending = send('hold: the first attempt', 2);
    await waitUntil(
      () =>
        fleet.provider.requests.some((r) =>
          JSON.stringify(r.body?.messages ?? '').includes('hold: the first attempt'),
        ),
      {
        timeoutMs: 15_000,
        message: 'the first attempt reaching the model',
      },
    );
    const port = fleet.provider.requests.find((r) =>
      JSON.stringify(r.body?.messages ?? '').includes('hold: the first attempt'),
    )!.remotePort!;
    const victimPid = await pidOwningPort(
      fleet.workers.map((w) => w.child.pid!),
      port,
    );
    expect(victimPid, fleet.logs()).not.toBeNull();
    const victim = fleet.workers.find((w) => w.child.pid === victimPid)!;
    const survivor = fleet.workers.find((w) => w !== victim)!;
    await victim.kill();
    // The api node sends it again once the dead worker's heartbeats stop (docs/invocation.md "A
    // worker that dies"); the model answers the second attempt.
    held.open();
    const answered = await pending;
    expect(answered.status, await answered.clone().text()).toBe(200);
    await waitForSpans(
      traceId(2),
      ['POST /agents/:id/send', 'send agents.invoke', 'process agents.invoke', 'invoke_agent', 'chat m'],
      "the re-dispatched invocation's trace",
    );
    const tree = traceTree(collector.spans, traceId(2));
    const http = spanNamed(tree.spans, 'POST /agents/:id/send');
    expect(http.attributes['http.response.status_code']).toBe(200);
    // Both sends are in the request's trace; the answer's model call is the survivor's, under the request.
    expect(tree.spans.filter((s) => s.name === 'send agents.invoke').length).toBeGreaterThanOrEqual(2);
    const chats = tree.spans.filter((s) => s.name === 'chat m');
    const answering = chats.find((c) => new RegExp(`:${survivor.child.pid}$`).test(c.instance));
    expect(answering, chats.map((c) => c.instance).join(', ')).toBeDefined();
    expect(tree.ancestors(answering!)).toContain(http);
    // The fleet goes on with a new worker in place of the dead one.
    fleet.workers.splice(fleet.workers.indexOf(victim), 1, await fleet.add('agent-worker'));
  });

  it('keeps every process serving while the collector is down, and traces again once it is back', async () => {
    await collector.stop();
    const exportsBefore = collector.requests;
    for (let i = 0; i < 3; i++) expect((await send(`while the collector is down ${i}`, 4)).status).toBe(200);
    // Long enough for several export attempts of every process to fail (every 100 ms).
    await waitUntil(() => fleet.apis[0]!.output().includes('telemetry'), {
      timeoutMs: 15_000,
      message: 'the api to report the failed export',
    });
    for (const process of [...fleet.apis, ...fleet.workers, ...fleet.schedulers]) {
      expect(
        { code: process.child.exitCode, signal: process.child.signalCode },
        `${process.app} exited`,
      ).toEqual({ code: null, signal: null });
    }
    expect(collector.requests).toBe(exportsBefore);

    await collector.restart();
    expect((await send('after the collector came back', 5)).status).toBe(200);
    await waitForSpans(
      traceId(5),
      ['POST /agents/:id/send', 'process agents.invoke', 'invoke_agent', 'chat m'],
      'a complete trace after the outage',
    );
    expect(spanNamed(spansOf(traceId(5)), 'chat m').service).toBe('agent-worker');
  });
});
