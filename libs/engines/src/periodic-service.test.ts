import { waitUntil } from '@agent-platform/testkit';
import { describe, expect, it } from 'vitest';
import { createPeriodicService } from './periodic-service.ts';

describe('periodic service', () => {
  it('ticks on its period, warns once per distinct failure in a row, and stop waits for the tick in flight', async () => {
    const warnings: string[] = [];
    let ticks = 0;
    let finished = 0;
    const failures = ['sink down', 'sink down', 'sink down', 'disk full', 'ok', 'sink down'];
    const service = createPeriodicService({
      name: 'probe',
      intervalSecs: () => 0.4, // a tick every 100 ms
      tick: async () => {
        const failure = failures[ticks++];
        await new Promise((resolve) => setTimeout(resolve, 20));
        finished++;
        if (failure !== undefined && failure !== 'ok') throw new Error(failure);
      },
      warn: (context) => warnings.push(String(context.reason)),
      failure: 'probe failed',
      firstTickMs: 10,
    });
    await service.start();
    await waitUntil(() => ticks >= 7, { timeoutMs: 5_000, message: 'seven ticks' });
    await service.stop();
    expect(finished).toBe(ticks);
    expect(warnings).toEqual(['sink down', 'disk full', 'sink down']);
    const after = ticks;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(ticks).toBe(after);
  });

  it('does not start when disabled', async () => {
    let ticks = 0;
    const service = createPeriodicService({
      name: 'off',
      intervalSecs: () => 0.4,
      tick: async () => void ticks++,
      warn: () => undefined,
      failure: 'x',
      enabled: () => false,
      firstTickMs: 1,
    });
    await service.start();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await service.stop();
    expect(ticks).toBe(0);
  });
});
