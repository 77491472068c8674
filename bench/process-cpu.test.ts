import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cpuMs, cpuPerRequest } from './process-cpu.ts';

describe('CPU per request', () => {
  it('divides each process\'s CPU over the window by the requests, and sums them', () => {
    const before = new Map([['api-1', 1_000], ['agent-worker-1', 2_000]]);
    const after = new Map([['api-1', 1_900], ['agent-worker-1', 3_500]]);
    const { total, byRole } = cpuPerRequest(before, after, 1_500);
    expect(byRole.get('api-1')).toBe(600);
    expect(byRole.get('agent-worker-1')).toBe(1_000);
    expect(total).toBe(1_600);
  });

  it('says nothing for a process gone by the end (read as 0) or a window without requests', () => {
    const gone = cpuPerRequest(new Map([['a', 500], ['b', 700]]), new Map([['a', 800], ['b', 0]]), 100);
    expect(gone.byRole.get('a')).toBe(3_000);
    expect(gone.byRole.get('b')).toBeNull();
    expect(gone.total).toBeNull();
    expect(cpuPerRequest(new Map([['a', 500]]), new Map([['a', 800]]), 0).total).toBeNull();
    expect(cpuPerRequest(new Map(), new Map(), 100).total).toBeNull();
  });

  it('reads a live process\'s CPU time from /proc, growing as it works', async () => {
    const self = [{ role: 'self', pid: process.pid }];
    const before = (await cpuMs(self)).get('self')!;
    // 100 ms of this process's own CPU, however busy the machine is (process.cpuUsage counts it).
    const start = process.cpuUsage();
    while (process.cpuUsage(start).user < 100_000) Math.sqrt(Math.random());
    const after = (await cpuMs(self)).get('self')!;
    expect(before).toBeGreaterThan(0);
    expect(after - before).toBeGreaterThanOrEqual(50);
  });

  it('counts a process\'s children with withChildren: the live ones, then the reaped ones', { timeout: 40_000 }, async () => {
    // A parent that sleeps while its child burns about 300 ms of CPU and then exits (reaped by the shell).
    const parent = spawn('sh', ['-c', `node -e 'const s = process.cpuUsage(); while (process.cpuUsage(s).user < 300000);' & wait; sleep 60`]);
    try {
      const alone = { role: 'p', pid: parent.pid! };
      const family = { ...alone, withChildren: true };
      let [own, all] = [0, 0];
      for (const deadline = Date.now() + 30_000; all - own < 250 && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        [own, all] = [(await cpuMs([alone])).get('p')!, (await cpuMs([family])).get('p')!];
      }
      expect(own).toBeLessThan(100);
      expect(all - own).toBeGreaterThanOrEqual(250);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
