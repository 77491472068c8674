import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bus } from '@agent-platform/bus';
import { busStreamCases } from './bus-conformance-streams.ts';
import { expectBusError, type BusFactory, type BusHarness, type BusUnderTest } from './bus-harness.ts';
import { gate, waitUntil } from './wait-until.ts';

/** The bus port's contract (libs/bus/src/bus.ts), run against one adapter. */
export function busConformance(name: string, factory: BusFactory): void {
  describe(`Bus conformance: ${name}`, () => {
    let sut: BusUnderTest | undefined;
    let buses = new Set<Bus>();
    let prefix = '';

    beforeEach(async () => {
      sut = await factory();
      buses = new Set([sut.bus]);
      prefix = `conf.${randomUUID().slice(0, 8)}`;
    });

    afterEach(async () => {
      for (const bus of buses) await bus.close();
      await sut?.cleanup();
      sut = undefined;
    });

    const harness: BusHarness = {
      get bus() {
        return sut!.bus;
      },
      second: async () => {
        const bus = sut!.second ? await sut!.second() : sut!.bus;
        buses.add(bus);
        return bus;
      },
      name: (suffix) => `${prefix}.${suffix}`,
    };

    requestCases(harness);
    busStreamCases(harness);
    notifyAndLifecycleCases(harness);
  });
}

function requestCases(h: BusHarness): void {
  it('answers a request, with the payload and reply carried as JSON', async () => {
    const subject = h.name('echo');
    await h.bus.serve<{ at: unknown; n: number }, unknown>(subject, async (payload, ctx) => ({ payload, subject: ctx.subject }));
    const reply = await h.bus.request(subject, { at: new Date(0), n: 1 }, { timeoutMs: 2_000 });
    expect(reply).toEqual({ payload: { at: '1970-01-01T00:00:00.000Z', n: 1 }, subject });
  });

  it('carries request headers to the server as sent, and none when none were sent', async () => {
    const subject = h.name('headers');
    const other = await h.second();
    await other.serve<string, unknown>(subject, async (_payload, ctx) => ctx.headers);
    const headers = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', baggage: 'correlation_id=c-1' };
    expect(await h.bus.request(subject, 'x', { timeoutMs: 2_000, headers })).toEqual(headers);
    expect(await h.bus.request(subject, 'x', { timeoutMs: 2_000 })).toEqual({});
  });

  it('refuses a header NATS could not carry, sending nothing', async () => {
    const subject = h.name('bad-headers');
    let served = 0;
    await h.bus.serve<string, string>(subject, async () => {
      served += 1;
      return 'ok';
    });
    await expect(h.bus.request(subject, 'x', { timeoutMs: 2_000, headers: { 'Nats-Msg-Id': 'x' } })).rejects.toThrow(/header name/);
    await expect(h.bus.request(subject, 'x', { timeoutMs: 2_000, headers: { tracestate: 'a\r\nb' } })).rejects.toThrow(/several lines/);
    expect(await h.bus.request(subject, 'x', { timeoutMs: 2_000 })).toBe('ok');
    expect(served).toBe(1);
  });

  it('splits the requests of a queue group across its servers, each answered once', async () => {
    const subject = h.name('group');
    const seen: string[][] = [[], []];
    const other = await h.second();
    for (const [i, bus] of [h.bus, other].entries()) {
      await bus.serve<{ id: string }, string>(subject, async ({ id }) => {
        seen[i]!.push(id);
        return `done ${id}`;
      }, { queue: 'workers' });
    }
    const ids = Array.from({ length: 100 }, (_, i) => `r${i}`);
    const replies = await Promise.all(ids.map((id) => h.bus.request(subject, { id }, { timeoutMs: 3_000 })));
    expect(replies).toEqual(ids.map((id) => `done ${id}`));
    expect(seen[0]!.length).toBeGreaterThan(0);
    expect(seen[1]!.length).toBeGreaterThan(0);
    expect([...seen[0]!, ...seen[1]!].sort()).toEqual([...ids].sort());
  });

  it('fails at once with no_responders when nobody serves the subject', async () => {
    const started = Date.now();
    await expectBusError(h.bus.request(h.name('nobody'), {}, { timeoutMs: 4_000 }), 'no_responders');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('fails with timeout when the server is too slow', async () => {
    const subject = h.name('slow');
    const held = gate();
    await h.bus.serve(subject, async () => held.promise);
    const started = Date.now();
    await expectBusError(h.bus.request(subject, {}, { timeoutMs: 150 }), 'timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    held.open();
  });

  it('fails with aborted when the caller aborts the wait', async () => {
    const subject = h.name('abort');
    const held = gate();
    await h.bus.serve(subject, async () => held.promise);
    const controller = new AbortController();
    const pending = h.bus.request(subject, {}, { timeoutMs: 4_000, signal: controller.signal });
    controller.abort();
    await expectBusError(pending, 'aborted');
    held.open();
  });

  it('carries a handler error to the caller as remote with its category, message and details', async () => {
    const subject = h.name('fails');
    await h.bus.serve(subject, async () => {
      throw Object.assign(new Error('agent a1 not found'), { category: 'NotFound', details: { id: 'a1' } });
    });
    const error = await expectBusError(h.bus.request(subject, {}, { timeoutMs: 2_000 }), 'remote');
    expect(error.remote).toEqual({ category: 'NotFound', message: 'agent a1 not found', details: { id: 'a1' } });
    expect(error.message).toBe('agent a1 not found');
  });

  it('refuses a request over the maximum payload at once, sending nothing', async () => {
    const subject = h.name('big-request');
    let served = 0;
    await h.bus.serve(subject, async () => ++served);
    const max = h.bus.maxPayloadBytes();
    expect(max).toBeGreaterThan(1024);
    const error = await expectBusError(h.bus.request(subject, { text: 'x'.repeat(max) }, { timeoutMs: 4_000 }), 'payload_too_large');
    expect(error.message).toContain(String(max));
    // A request just under the limit still goes through.
    await expect(h.bus.request(subject, { text: 'x'.repeat(max - 1024) }, { timeoutMs: 4_000 })).resolves.toBe(1);
    expect(served).toBe(1);
  });

  it('answers a reply over the maximum payload with a SizeLimitExceeded error at once, not a timeout', async () => {
    const subject = h.name('big-reply');
    const max = h.bus.maxPayloadBytes();
    await h.bus.serve(subject, async () => ({ text: 'é'.repeat(max / 2) }));
    const error = await expectBusError(h.bus.request(subject, {}, { timeoutMs: 20_000 }), 'remote');
    expect(error.remote?.category).toBe('SizeLimitExceeded');
    expect(error.remote?.details).toMatchObject({ max_bytes: max });
    // The subject keeps serving.
    await h.bus.serve(h.name('after'), async () => 'ok');
    await expect(h.bus.request(h.name('after'), {}, { timeoutMs: 4_000 })).resolves.toBe('ok');
  });

  it('hides an uncategorised handler error behind Internal', async () => {
    const subject = h.name('crash');
    await h.bus.serve(subject, async () => {
      throw new Error('secret stack detail');
    });
    const error = await expectBusError(h.bus.request(subject, {}, { timeoutMs: 2_000 }), 'remote');
    expect(error.remote?.category).toBe('Internal');
    expect(error.remote?.message).not.toContain('secret');
  });
}

function notifyAndLifecycleCases(h: BusHarness): void {
  it('delivers a notification to every listener on every connection', async () => {
    const subject = h.name('invalidate');
    const got: string[] = [];
    const other = await h.second();
    await h.bus.listen<{ key: string }>(subject, (p) => got.push(`a:${p.key}`));
    await h.bus.listen<{ key: string }>(subject, () => {
      throw new Error('a broken listener harms no one');
    });
    await other.listen<{ key: string }>(subject, (p) => got.push(`b:${p.key}`));
    await h.bus.notify(subject, { key: 'k1' });
    await waitUntil(() => got.length === 2, { message: 'both listeners' });
    expect(got.sort()).toEqual(['a:k1', 'b:k1']);
  });

  it('refuses a notification over the maximum payload', async () => {
    const subject = h.name('big-note');
    const got: unknown[] = [];
    await h.bus.listen(subject, (p) => got.push(p));
    await expectBusError(h.bus.notify(subject, 'x'.repeat(h.bus.maxPayloadBytes())), 'payload_too_large');
    await h.bus.notify(subject, 'small');
    await waitUntil(() => got.length === 1, { message: 'the small notification' });
    expect(got).toEqual(['small']);
  });

  it('drain waits for the handler in flight', async () => {
    const subject = h.name('drain');
    let finished = false;
    const started = gate();
    const sub = await h.bus.serve(subject, async () => {
      started.open();
      await new Promise((resolve) => setTimeout(resolve, 200));
      finished = true;
      return 'ok';
    });
    const reply = h.bus.request(subject, {}, { timeoutMs: 2_000 });
    await started.promise;
    await sub.drain();
    expect(finished).toBe(true);
    await expect(reply).resolves.toBe('ok');
  });

  it('reports health, and refuses calls with closed once closed', async () => {
    expect((await h.bus.health()).status).toBe('ok');
    await h.bus.close();
    expect((await h.bus.health()).status).toBe('down');
    await expectBusError(h.bus.request(h.name('late'), {}, { timeoutMs: 500 }), 'closed');
    await expectBusError(h.bus.notify(h.name('late'), {}), 'closed');
  });
}
