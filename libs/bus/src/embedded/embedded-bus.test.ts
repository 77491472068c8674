import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Envelope } from '@agent-platform/contracts';
import { busConformance, gate, waitUntil } from '@agent-platform/testkit';
import { createEmbeddedBus } from './embedded-bus.ts';
import type { Bus } from '../bus.ts';

busConformance('embedded', async () => {
  const bus = createEmbeddedBus();
  // One process, one bus: a "second connection" is the same instance.
  return { bus, second: async () => bus, cleanup: async () => undefined };
});

function envelope<T>(data: T, id: string = randomUUID()): Envelope<T> {
  return { id, correlation_id: 'c', attempt: 1, occurred_at: new Date().toISOString(), data };
}

describe('EmbeddedBus', () => {
  let bus: Bus;
  afterEach(async () => {
    await bus.close();
  });

  it('copies payloads: a server cannot change the caller’s object', async () => {
    bus = createEmbeddedBus();
    await bus.serve<{ list: number[] }, { list: number[] }>('mutate', async (p) => {
      p.list.push(99);
      return p;
    });
    const sent = { list: [1] };
    const reply = await bus.request<{ list: number[] }, { list: number[] }>('mutate', sent, { timeoutMs: 1_000 });
    expect(sent.list).toEqual([1]);
    expect(reply.list).toEqual([1, 99]);
  });

  it('redelivers a delivery that overruns ackWaitMs while the first run goes on', async () => {
    bus = createEmbeddedBus();
    const first = gate();
    const attempts: number[] = [];
    await bus.consume('slow', { durable: 'd', maxDeliver: 3, backoffMs: [0], ackWaitMs: 100 }, async (e) => {
      attempts.push(e.attempt);
      if (e.attempt === 1) await first.promise;
    });
    await bus.publish('slow', envelope({}));
    await waitUntil(() => attempts.length === 2, { message: 'the redelivery after ackWait' });
    expect(attempts).toEqual([1, 2]);
    first.open();
  });

  it('dead-letters when every delivery overran ackWaitMs', async () => {
    bus = createEmbeddedBus();
    const held = gate();
    const dead: unknown[] = [];
    await bus.consume('stuck', { durable: 'd', maxDeliver: 2, backoffMs: [0], ackWaitMs: 50, onDeadLetter: (_e, err) => dead.push(err) }, async () => held.promise);
    await bus.publish('stuck', envelope({}, 'hung'));
    await waitUntil(() => dead.length === 1, { message: 'the dead letter' });
    expect(String(dead[0])).toContain('ackWaitMs');
    held.open();
  });

  it('runs up to `concurrency` handlers of one consumer at once', async () => {
    bus = createEmbeddedBus();
    const held = gate();
    let running = 0;
    let peak = 0;
    await bus.consume('par', { durable: 'd', maxDeliver: 1, backoffMs: [], concurrency: 3 }, async () => {
      running += 1;
      peak = Math.max(peak, running);
      await held.promise;
      running -= 1;
    });
    for (let i = 0; i < 5; i++) await bus.publish('par', envelope({}));
    await waitUntil(() => running === 3, { message: 'three handlers running' });
    held.open();
    await waitUntil(() => running === 0, { message: 'all handlers done' });
    expect(peak).toBe(3);
  });

  it('accepts an id again once the dedup window has passed', async () => {
    bus = createEmbeddedBus({ dedupWindowMs: 30 });
    expect(await bus.publish('w', envelope({}, 'x'))).toEqual({ duplicate: false });
    expect(await bus.publish('w', envelope({}, 'x'))).toEqual({ duplicate: true });
    await waitUntil(async () => !(await bus.publish('w', envelope({}, 'x'))).duplicate, { message: 'the window to pass' });
  });

  it('reports a throwing listener to onError', async () => {
    const errors: string[] = [];
    bus = createEmbeddedBus({ onError: (e, ctx) => errors.push(`${ctx.subject}: ${(e as Error).message}`) });
    await bus.listen('n', () => {
      throw new Error('boom');
    });
    await bus.notify('n', {});
    await waitUntil(() => errors.length === 1, { message: 'the reported error' });
    expect(errors).toEqual(['n: boom']);
  });
});
