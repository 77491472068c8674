import { describe, expect, it } from 'vitest';
import { createInvocationSlots } from './invocation-slots.ts';

describe('invocation slots', () => {
  it('hands out max slots, then queues in arrival order; a release admits the next waiter', async () => {
    const slots = createInvocationSlots(() => 2);
    const a = slots.tryAcquire();
    const b = slots.tryAcquire();
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(slots.tryAcquire()).toBeNull();
    const order: string[] = [];
    const c = slots.acquire(new AbortController().signal).then((r) => (order.push('c'), r));
    const d = slots.acquire(new AbortController().signal).then((r) => (order.push('d'), r));
    expect(slots.waiting).toBe(2);
    a!();
    a!(); // a second release of the same slot frees nothing more
    await c;
    expect(order).toEqual(['c']);
    expect(slots.running).toBe(2);
    b!();
    await d;
    expect(order).toEqual(['c', 'd']);
  });

  it('drops a waiter whose signal aborts, with the signal reason, and gives its turn to the next', async () => {
    const slots = createInvocationSlots(() => 1);
    const held = slots.tryAcquire()!;
    const leaving = new AbortController();
    const left = slots.acquire(leaving.signal).catch((e: unknown) => e);
    const next = slots.acquire(new AbortController().signal);
    leaving.abort(new Error('gave up'));
    expect(await left).toMatchObject({ message: 'gave up' });
    expect(slots.waiting).toBe(1);
    held();
    await next;
    expect(slots.running).toBe(1);
    expect(slots.waiting).toBe(0);
  });

  it('does not let a newcomer pass the line while others wait', async () => {
    let max = 1;
    const slots = createInvocationSlots(() => max);
    const held = slots.tryAcquire()!;
    const waiting = slots.acquire(new AbortController().signal);
    max = 2;
    expect(slots.tryAcquire()).toBeNull();
    held();
    await waiting;
    expect(slots.running).toBe(1);
  });
});
