import { describe, expect, it } from 'vitest';
import { summarizeLatencies } from './latency.ts';
import { createReport, renderMarkdown, type TargetOutcome } from './report.ts';
import type { LoadResult } from './target.ts';

const result = (throughputRps: number, latencyP50Ms: number, extra: Partial<LoadResult> = {}): LoadResult => ({
  requests: throughputRps * 10,
  throughputRps,
  latencyP50Ms,
  latencyP99Ms: latencyP50Ms * 2,
  latencyMeanMs: latencyP50Ms,
  errors: 0,
  timeouts: 0,
  non2xx: 0,
  ...extra,
});

const outcome = (name: string, r: LoadResult | null, extra: Partial<TargetOutcome> = {}): TargetOutcome => ({
  name,
  description: name,
  result: r,
  valid: r !== null && r.errors + r.timeouts + r.non2xx === 0,
  rssBytes: 100 * 2 ** 20,
  memory: [{ role: name, rssBytes: 100 * 2 ** 20 }],
  ...extra,
});

const settings = { connections: 10, durationSecs: 10, pipelining: 1, warmupSecs: 3, profiled: false };

describe('bench report', () => {
  it('judges throughput ratios and added p50 against the other target of the same run', () => {
    const report = createReport(new Date(0), settings, 'hello-world', [
      outcome('hello-world', result(10_000, 0.1)),
      outcome('send', result(3_000, 2), { goal: { kind: 'throughput-ratio', against: 'hello-world', atLeast: 0.5, label: 'send' } }),
      outcome('two', result(380, 90), { goal: { kind: 'throughput-ratio', against: 'one', atLeast: 1.8, label: 'two' } }),
      outcome('one', result(200, 170)),
      outcome('http', result(900, 1.4), { goal: { kind: 'added-p50-ms', against: 'nats', atMost: 1, label: 'added' } }),
      outcome('nats', result(2_000, 0.5)),
    ], 0.5);
    expect(report.goals.map((g) => [g.label, g.status, Number(g.value?.toFixed(2))])).toEqual([
      ['send', 'missed', 0.3],
      ['two', 'met', 1.9],
      ['added', 'met', 0.9],
    ]);
  });

  it('does not judge a goal whose other target failed, did not run, or had errors', () => {
    const goal = { kind: 'throughput-ratio' as const, against: 'base', atLeast: 1, label: 'g' };
    const statuses = [
      [outcome('t', result(5, 1), { goal }), outcome('base', null, { error: 'did not start' })],
      [outcome('t', result(5, 1), { goal })],
      [outcome('t', result(5, 1), { goal }), outcome('base', result(5, 1, { non2xx: 3 }))],
    ].map((targets) => createReport(new Date(0), settings, 'base', targets, 0.5).goals[0]?.status);
    expect(statuses).toEqual(['not measured', 'not measured', 'invalid']);
  });

  it('judges a p50 ceiling on the target alone, and not on a failed or invalid run', () => {
    const goal = { kind: 'at-most' as const, metric: 'latencyP50Ms' as const, atMost: 2, label: 'per step <= 2 ms' };
    const report = createReport(new Date(0), settings, 'hello-world', [
      outcome('fast', result(30, 1.5), { goal }),
      outcome('slow', result(10, 2.5), { goal }),
      outcome('broken', null, { goal, error: 'did not start' }),
      outcome('erring', result(30, 1, { errors: 1 }), { goal }),
    ], 0.5);
    expect(report.goals.map((g) => [g.target, g.status, g.value, g.against])).toEqual([
      ['fast', 'met', 1.5, null],
      ['slow', 'missed', 2.5, null],
      ['broken', 'not measured', null, null],
      ['erring', 'invalid', null, null],
    ]);
    expect(renderMarkdown(report)).toContain('| per step <= 2 ms | 2.50 ms | missed |');
  });

  it('shows a ratio below 0.1x with three decimals, so 0.015x is not rounded to 0.01x', () => {
    const goal = { kind: 'throughput-ratio' as const, against: 'hello-world', atLeast: 0.1, label: 'send >= 0.1x' };
    const markdown = renderMarkdown(
      createReport(new Date(0), settings, 'hello-world', [outcome('hello-world', result(40_000, 0.2)), outcome('send', result(600, 15), { goal })], 0.5),
    );
    expect(markdown).toContain('| send | 600 | 15.00 | 30.00 | 0 / 0 / 0 | 100 | – | 0.015x | yes |');
    expect(markdown).toContain('| send >= 0.1x | 0.015x | missed |');
  });

  it('judges an RSS ceiling on the memory the target\'s processes held, in MB', () => {
    const goal = { kind: 'at-most' as const, metric: 'rssMb' as const, atMost: 250, label: 'RSS <= 250 MB' };
    const report = createReport(new Date(0), settings, 'hello-world', [
      outcome('lean', result(30, 1), { goal, rssBytes: 200 * 2 ** 20 }),
      outcome('heavy', result(30, 1), { goal, rssBytes: 374 * 2 ** 20 }),
      outcome('unread', result(30, 1), { goal, rssBytes: null }),
    ], 0.5);
    expect(report.goals.map((g) => [g.target, g.status, g.value])).toEqual([
      ['lean', 'met', 200],
      ['heavy', 'missed', 374],
      ['unread', 'not measured', null],
    ]);
    expect(renderMarkdown(report)).toContain('| RSS <= 250 MB | 374 MB | missed |');
  });

  it('renders one row per target, a failed one with its error, and the memory of multi-process targets', () => {
    const markdown = renderMarkdown(
      createReport(new Date(0), settings, 'hello-world', [
        outcome('hello-world', result(10_000, 0.1)),
        outcome('fleet', result(2_000, 4), {
          memory: [
            { role: 'api-1', rssBytes: 200 * 2 ** 20, cpuUsPerRequest: 912.4 },
            { role: 'agent-worker-1', rssBytes: 170 * 2 ** 20, cpuUsPerRequest: null },
          ],
          cpuUsPerRequest: null,
        }),
        outcome('send', result(1_000, 5), { cpuUsPerRequest: 612.6 }),
        outcome('broken', null, { error: 'POST /x answered 500 | boom\nstack' }),
      ], 0.5),
    );
    expect(markdown).toContain('| fleet | 2000 | 4.00 | 8.00 | 0 / 0 / 0 | 100 | – | 0.20x | yes |');
    expect(markdown).toContain('| send | 1000 | 5.00 | 10.00 | 0 / 0 / 0 | 100 | 613 | 0.10x | yes |');
    expect(markdown).toContain('| fleet | api-1 | 200 | 912 |');
    expect(markdown).toContain('| fleet | agent-worker-1 | 170 | – |');
    expect(markdown).toContain('failed: POST /x answered 500 \\| boom |');
    expect(markdown).not.toContain('| hello-world | hello-world |');
  });

  it('judges absolute ceilings on a p99 or a detail of the target itself, and shows its details instead of a ratio', () => {
    const ceilings = [
      { kind: 'at-most' as const, metric: 'detail:missed' as const, atMost: 0, label: 'missed' },
      { kind: 'at-most' as const, metric: 'detail:duplicates' as const, atMost: 0, label: 'duplicates' },
      { kind: 'at-most' as const, metric: 'latencyP99Ms' as const, atMost: 250, label: 'p99' },
      { kind: 'at-most' as const, metric: 'detail:unknown' as const, atMost: 0, label: 'unknown' },
    ];
    const schedules = result(100, 900, { details: { expected: 2000, missed: 3, duplicates: 0 } });
    const report = createReport(new Date(0), settings, 'hello-world', [
      outcome('hello-world', result(10_000, 0.1)),
      outcome('schedules', schedules, { goals: ceilings }),
      outcome('broken', result(100, 1, { errors: 2 }), { goals: [ceilings[0]!] }),
    ], 0.5);
    expect(report.goals.map((g) => [g.label, g.status, g.value, g.against])).toEqual([
      ['missed', 'missed', 3, null],
      ['duplicates', 'met', 0, null],
      ['p99', 'missed', 1800, null],
      ['unknown', 'not measured', null, null],
      ['missed', 'invalid', null, null],
    ]);
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('| schedules | 100 | 900.00 | 1800.00 | 0 / 0 / 0 | 100 | – | – | yes |');
    expect(markdown).toContain('| schedules | expected 2000, missed 3, duplicates 0 |');
    expect(markdown).toContain('| missed | 3 | missed |');
    expect(markdown).toContain('| p99 | 1800.00 ms | missed |');
  });

  it('names the targets that ran with a warm-up or a duration of their own, and only those', () => {
    const own = (warmupSecs: number, durationSecs: number) => ({ timing: { warmupSecs, durationSecs } });
    const markdown = renderMarkdown(
      createReport(new Date(0), settings, 'hello-world', [
        outcome('hello-world', result(10_000, 0.1), own(3, 10)),
        outcome('fleet-latency-http', result(300, 3), own(30, 10)),
        outcome('schedules', result(100, 5), own(3, 120)),
        outcome('failed', null, { error: 'did not start' }),
      ], 0.5),
    );
    expect(markdown).toContain('3 s warm-up + 10 s per target;');
    expect(markdown).toContain('Targets with their own timing: fleet-latency-http 30 s warm-up + 10 s, schedules 3 s warm-up + 120 s.');
    const plain = renderMarkdown(createReport(new Date(0), settings, 'hello-world', [outcome('hello-world', result(10_000, 0.1), own(3, 10))], 0.5));
    expect(plain).not.toContain('own timing');
  });

  it('takes nearest-rank percentiles of fractional milliseconds', () => {
    const latencies = Array.from({ length: 100 }, (_, i) => (i + 1) / 10);
    expect(summarizeLatencies(latencies)).toMatchObject({ latencyP50Ms: 5, latencyP99Ms: 9.9 });
    expect(summarizeLatencies([])).toEqual({ latencyP50Ms: 0, latencyP99Ms: 0, latencyMeanMs: 0 });
  });
});
