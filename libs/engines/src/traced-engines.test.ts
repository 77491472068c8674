import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Bus, MessageHeaders } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { inSpan, withCorrelation } from '@agent-platform/observability';
import { startTelemetry, type Telemetry } from '@agent-platform/observability/otel';
import type { Queue } from '@agent-platform/queue';
import { openEmbeddedQueue } from '@agent-platform/queue/embedded';
import {
  startOtlpCollector,
  waitUntil,
  type CollectedSpan,
  type OtlpCollector,
} from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjectTemplate, traceBus } from './traced-bus.ts';
import { traceQueue } from './traced-queue.ts';

// The tracing decorators of the bus and the queue, with the SDK registered as a process does it
// when `[telemetry] otlp_endpoint` is set (this file runs in its own process). Spans go to an OTLP
// collector in this test; the adapters are the embedded ones (the NATS and BullMQ adapters carry
// the same headers and job data: the bus conformance suite, tests/e2e/fleet-tracing.test.ts).
describe('traced engines', () => {
  let collector: OtlpCollector;
  let telemetry: Telemetry;
  let dir: string;
  let rawBus: Bus;
  let bus: Bus;
  let rawQueue: Queue;
  let queue: Queue;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    telemetry = startTelemetry({
      endpoint: collector.url,
      serviceName: 'engines',
      samplingRatio: 1,
      headers: {},
      exportIntervalMs: 50,
      onExportError: () => undefined,
    });
    dir = await mkdtemp(join(tmpdir(), 'ap-traced-'));
    rawBus = createEmbeddedBus();
    bus = traceBus(rawBus);
    rawQueue = await openEmbeddedQueue({ path: join(dir, 'queue.db') });
    queue = traceQueue(rawQueue);
  });
  afterAll(async () => {
    await bus.close();
    await queue.close();
    await telemetry.shutdown();
    await collector.close();
    await rm(dir, { recursive: true, force: true });
  });

  const span = (name: string): CollectedSpan => collector.spans.find((s) => s.name === name)!;
  const exported = (...names: string[]) =>
    waitUntil(() => names.every((n) => collector.spans.some((s) => s.name === n)), {
      message: `spans ${names.join(', ')}`,
    });

  it("continues the requester's trace in the server, with its correlation id, and passes other headers on", async () => {
    let received: MessageHeaders = {};
    await bus.serve<string, string>('t.echo', async (payload, context) => {
      received = context.headers;
      return inSpan('server work', {}, async () => payload);
    });
    const reply = await inSpan('caller', {}, () =>
      withCorrelation('corr-r', () =>
        bus.request<string, string>('t.echo', 'hi', { timeoutMs: 2_000, headers: { 'x-extra': '1' } }),
      ),
    );
    expect(reply).toBe('hi');
    expect(received).toMatchObject({
      'x-extra': '1',
      traceparent: expect.any(String),
      baggage: 'correlation_id=corr-r',
    });
    await exported('caller', 'send t.echo', 'process t.echo', 'server work');
    expect(span('send t.echo')).toMatchObject({ parentSpanId: span('caller').spanId, kind: 3 });
    expect(span('process t.echo')).toMatchObject({
      parentSpanId: span('send t.echo').spanId,
      kind: 2,
      attributes: { correlation_id: 'corr-r' },
    });
    expect(span('server work')).toMatchObject({
      parentSpanId: span('process t.echo').spanId,
      attributes: { correlation_id: 'corr-r' },
    });
  });

  it("continues the publisher's trace in every delivery of a stream message, redeliveries included", async () => {
    const attempts: number[] = [];
    await bus.consume<{ n: number }>(
      't.stream',
      { durable: 'd', maxDeliver: 3, backoffMs: [10] },
      async (envelope) => {
        attempts.push(envelope.attempt);
        if (envelope.attempt === 1) throw Object.assign(new Error('again'), { retryable: true });
      },
    );
    await inSpan('publisher', {}, () =>
      bus.publish('t.stream', {
        id: randomUUID(),
        correlation_id: 'c',
        attempt: 1,
        occurred_at: new Date().toISOString(),
        data: { n: 1 },
      }),
    );
    await waitUntil(() => attempts.length === 2, { message: 'two deliveries' });
    await waitUntil(() => collector.spans.filter((s) => s.name === 'process t.stream').length === 2, {
      message: 'two consumer spans',
    });
    const publish = span('publish t.stream');
    expect(publish.parentSpanId).toBe(span('publisher').spanId);
    const deliveries = collector.spans.filter((s) => s.name === 'process t.stream');
    expect(deliveries.map((d) => [d.parentSpanId, d.attributes['messaging.delivery.attempt']])).toEqual([
      [publish.spanId, 1],
      [publish.spanId, 2],
    ]);
    expect(deliveries[0]!.status).toBe(2);
  });

  it("carries the trace in a job's data and removes it before the handler sees the job", async () => {
    const seenRaw: unknown[] = [];
    const seenTraced: unknown[] = [];
    // A producer with tracing writes `trace_context` into the job data, as stored.
    await inSpan('enqueuer', {}, () => queue.add('t-raw', { a: 1 }));
    await rawQueue.process('t-raw', async (job) => void seenRaw.push(job.data));
    await waitUntil(() => seenRaw.length === 1, { message: 'the raw job' });
    expect(seenRaw[0]).toMatchObject({ a: 1, trace_context: { traceparent: expect.stringMatching(/^00-/) } });

    await queue.process('t-traced', async (job) => void seenTraced.push(job.data));
    await inSpan('producer', {}, () => queue.add('t-traced', { b: 2 }, { jobId: 'one' }));
    await waitUntil(() => seenTraced.length === 1, { message: 'the traced job' });
    expect(seenTraced[0]).toEqual({ b: 2 });
    await exported('producer', 'process t-traced');
    expect(span('process t-traced')).toMatchObject({
      parentSpanId: span('producer').spanId,
      traceId: span('producer').traceId,
      kind: 5,
    });
  });

  it('names spans by subject template, not by the ids in a subject', () => {
    expect(subjectTemplate('channels.send.3f2a1c9e-5b7d-4e1f-9a2b-1c3d5e7f9a0b')).toBe('channels.send.*');
    expect(subjectTemplate('agents.invoke')).toBe('agents.invoke');
  });
});
