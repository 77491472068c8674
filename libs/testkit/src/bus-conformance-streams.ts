import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Envelope } from '@agent-platform/contracts';
import type { ConsumeOptions } from '@agent-platform/bus';
import { expectBusError, type BusHarness } from './bus-harness.ts';
import { gate, waitUntil } from './wait-until.ts';

function envelope<T>(data: T, id: string = randomUUID()): Envelope<T> {
  return { id, correlation_id: randomUUID(), attempt: 1, occurred_at: new Date().toISOString(), data };
}

function retryable(message: string): Error {
  return Object.assign(new Error(message), { retryable: true });
}

const base: Omit<ConsumeOptions, 'durable'> = { maxDeliver: 3, backoffMs: [50] };

/** Durable stream cases of the bus conformance suite. */
export function busStreamCases(h: BusHarness): void {
  it('drops a re-publish of the same envelope id', async () => {
    const stream = h.name('dedup');
    const first = envelope({ n: 1 }, 'same-id');
    expect(await h.bus.publish(stream, first)).toEqual({ duplicate: false });
    expect(await h.bus.publish(stream, { ...first, data: { n: 2 } })).toEqual({ duplicate: true });
    await h.bus.publish(stream, envelope({ n: 3 }, 'marker'));
    const got: number[] = [];
    await h.bus.consume<{ n: number }>(stream, { ...base, durable: 'd' }, async (e) => {
      got.push(e.data.n);
    });
    await waitUntil(() => got.includes(3), { message: 'the marker message' });
    expect(got.sort()).toEqual([1, 3]);
  });

  it('refuses to publish a message over the maximum payload, and stores nothing', async () => {
    const stream = h.name('big');
    await expectBusError(h.bus.publish(stream, envelope({ text: 'x'.repeat(h.bus.maxPayloadBytes()) }, 'too-big')), 'payload_too_large');
    await h.bus.publish(stream, envelope({ text: 'small' }, 'small'));
    const got: string[] = [];
    await h.bus.consume<{ text: string }>(stream, { ...base, durable: 'd' }, async (e) => {
      got.push(e.id);
    });
    await waitUntil(() => got.includes('small'), { message: 'the small message' });
    expect(got).toEqual(['small']);
  });

  it('keeps a message\'s headers with it: every delivery, redeliveries included, gets them', async () => {
    const stream = h.name('headers');
    const headers = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'ap=1' };
    await h.bus.publish(stream, envelope({ n: 1 }, 'with-headers'), { headers });
    await h.bus.publish(stream, envelope({ n: 2 }, 'without'));
    const got: Array<{ id: string; attempt: number; headers: unknown }> = [];
    const other = await h.second();
    await other.consume(stream, { ...base, durable: 'h' }, async (e, delivery) => {
      got.push({ id: e.id, attempt: e.attempt, headers: delivery.headers });
      if (e.id === 'with-headers' && e.attempt === 1) throw retryable('once more');
    });
    await waitUntil(() => got.length === 3, { message: 'two deliveries with headers and one without' });
    expect(got.filter((d) => d.id === 'with-headers')).toEqual([
      { id: 'with-headers', attempt: 1, headers },
      { id: 'with-headers', attempt: 2, headers },
    ]);
    expect(got.find((d) => d.id === 'without')?.headers).toEqual({});
    // Headers are beside the envelope, not in it: the de-duplication by id is unchanged.
    expect(await h.bus.publish(stream, envelope({ n: 3 }, 'with-headers'), { headers })).toEqual({ duplicate: true });
  });

  it('keeps messages published before the consumer started', async () => {
    const stream = h.name('retained');
    for (const n of [1, 2, 3]) await h.bus.publish(stream, envelope({ n }));
    const got: Envelope<{ n: number }>[] = [];
    await h.bus.consume<{ n: number }>(stream, { ...base, durable: 'late' }, async (e) => {
      got.push(e);
    });
    await waitUntil(() => got.length === 3, { message: 'three retained messages' });
    expect(got.map((e) => e.data.n).sort()).toEqual([1, 2, 3]);
    expect(got.every((e) => e.attempt === 1)).toBe(true);
  });

  it('redelivers after a retryable failure with the attempt incremented, then acks', async () => {
    const stream = h.name('retry');
    const deliveries: { attempt: number; at: number }[] = [];
    const dead: unknown[] = [];
    await h.bus.consume(stream, { ...base, durable: 'r', backoffMs: [100], onDeadLetter: (e) => dead.push(e) }, async (e) => {
      deliveries.push({ attempt: e.attempt, at: Date.now() });
      if (e.attempt === 1) throw retryable('provider busy');
    });
    await h.bus.publish(stream, envelope({}, 'retry-me'));
    await waitUntil(() => deliveries.length === 2, { message: 'the redelivery' });
    expect(deliveries.map((d) => d.attempt)).toEqual([1, 2]);
    expect(deliveries[1]!.at - deliveries[0]!.at).toBeGreaterThanOrEqual(90);
    await h.bus.publish(stream, envelope({}, 'marker'));
    await waitUntil(() => deliveries.length === 3, { message: 'the marker message' });
    expect(dead).toEqual([]);
  });

  it('dead-letters a non-retryable failure once, without redelivery', async () => {
    const stream = h.name('fatal');
    const calls: string[] = [];
    const dead: { id: string; error: unknown }[] = [];
    const onDeadLetter = (e: Envelope<unknown>, error: unknown) => dead.push({ id: e.id, error });
    await h.bus.consume(stream, { ...base, durable: 'f', onDeadLetter }, async (e) => {
      calls.push(e.id);
      if (e.id === 'bad') throw new Error('malformed step');
    });
    await h.bus.publish(stream, envelope({}, 'bad'));
    await waitUntil(() => dead.length === 1, { message: 'the dead letter' });
    await h.bus.publish(stream, envelope({}, 'marker'));
    await waitUntil(() => calls.includes('marker'), { message: 'the marker message' });
    expect(calls.filter((id) => id === 'bad')).toHaveLength(1);
    expect(dead).toHaveLength(1);
    expect((dead[0]!.error as Error).message).toBe('malformed step');
  });

  it('dead-letters after maxDeliver retryable failures', async () => {
    const stream = h.name('exhausted');
    const attempts: number[] = [];
    const dead: Envelope<unknown>[] = [];
    await h.bus.consume(stream, { durable: 'x', maxDeliver: 3, backoffMs: [20, 40], onDeadLetter: (e) => dead.push(e) }, async (e) => {
      attempts.push(e.attempt);
      throw retryable('still busy');
    });
    await h.bus.publish(stream, envelope({ n: 7 }, 'doomed'));
    await waitUntil(() => dead.length === 1, { message: 'the dead letter' });
    expect(attempts).toEqual([1, 2, 3]);
    expect(dead[0]!.id).toBe('doomed');
    expect(dead[0]!.data).toEqual({ n: 7 });
  });

  it('splits one durable name between two consumers: each message handled exactly once', async () => {
    const stream = h.name('split');
    const counts = new Map<number, number>();
    const handler = async (e: Envelope<{ n: number }>) => {
      counts.set(e.data.n, (counts.get(e.data.n) ?? 0) + 1);
    };
    const other = await h.second();
    const subs = [
      await h.bus.consume(stream, { ...base, durable: 'shared', concurrency: 4 }, handler),
      await other.consume(stream, { ...base, durable: 'shared', concurrency: 4 }, handler),
    ];
    await Promise.all(Array.from({ length: 100 }, (_, n) => h.bus.publish(stream, envelope({ n }))));
    await waitUntil(() => counts.size === 100, { message: '100 distinct messages' });
    for (const sub of subs) await sub.drain();
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
  });

  it('drain waits for the handler in flight; the durable name resumes on a new consumer', async () => {
    const stream = h.name('drain');
    const started = gate();
    let finished = false;
    const first = await h.bus.consume(stream, { ...base, durable: 'resume' }, async () => {
      started.open();
      await new Promise((resolve) => setTimeout(resolve, 200));
      finished = true;
    });
    await h.bus.publish(stream, envelope({ n: 1 }));
    await started.promise;
    await first.drain();
    expect(finished).toBe(true);
    await h.bus.publish(stream, envelope({ n: 2 }));
    const resumed: number[] = [];
    await h.bus.consume<{ n: number }>(stream, { ...base, durable: 'resume' }, async (e) => {
      resumed.push(e.data.n);
    });
    await waitUntil(() => resumed.length > 0, { message: 'the resumed consumer' });
    expect(resumed).toEqual([2]);
  });
}
