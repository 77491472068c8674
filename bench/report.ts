import { cpus, loadavg, totalmem } from 'node:os';
import type { BenchGoal, LoadResult, LoadSettings } from './target.ts';

export interface TargetOutcome {
  name: string;
  description: string;
  goal?: BenchGoal;
  goals?: BenchGoal[];
  /** Null when the target failed before or during its run (see `error`). */
  result: LoadResult | null;
  /** Seconds of warm-up and of measurement it ran, when it ran: a target may have its own. */
  timing?: { warmupSecs: number; durationSecs: number };
  /** False when the run had errors, timeouts or non-2xx answers: its numbers mean nothing. */
  valid: boolean;
  /** RSS of the target's processes, summed, read right after the measured run. */
  rssBytes: number | null;
  /** Each process's RSS (null: it was gone), for memory per worker, and its CPU µs per request. */
  memory: Array<{ role: string; rssBytes: number | null; cpuUsPerRequest?: number | null }>;
  /**
   * User + system CPU time of the target's processes over the measured run (/proc), divided by
   * its requests, in µs; null when it could not be read (a process gone, not Linux).
   */
  cpuUsPerRequest?: number | null;
  error?: string;
}

export type GoalStatus = 'met' | 'missed' | 'not measured' | 'invalid';

export interface GoalOutcome {
  target: string;
  label: string;
  kind: BenchGoal['kind'];
  /** The other target; null for an absolute ceiling (at-most). */
  against: string | null;
  /** What an at-most goal caps (`latencyP99Ms`, `detail:missed`). */
  metric?: string;
  /** The measured ratio (throughput-ratio), added milliseconds (added-p50-ms) or the number itself (at-most). */
  value: number | null;
  status: GoalStatus;
}

export interface BenchReport {
  date: string;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    platform: string;
    arch: string;
    totalMemoryBytes: number;
    /**
     * 1-minute load average when the run started and ended: above the core count, other
     * processes were competing with the bench and its numbers are noisy.
     */
    loadAverage1m: { start: number; end: number };
  };
  settings: LoadSettings & { warmupSecs: number; profiled: boolean };
  baseline: string;
  targets: TargetOutcome[];
  goals: GoalOutcome[];
}

export function createReport(
  date: Date,
  settings: BenchReport['settings'],
  baseline: string,
  targets: TargetOutcome[],
  loadAtStart: number,
): BenchReport {
  const cpu = cpus();
  return {
    date: date.toISOString(),
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      totalMemoryBytes: totalmem(),
      loadAverage1m: { start: loadAtStart, end: loadavg()[0] ?? 0 },
    },
    settings,
    baseline,
    targets,
    goals: targets.flatMap((t) =>
      [...(t.goal === undefined ? [] : [t.goal]), ...(t.goals ?? [])].map((g) => evaluateGoal(t, g, targets)),
    ),
  };
}

/** A comparison is judged only on two valid runs of the same bench invocation; a p50 ceiling on one. */
export function evaluateGoal(target: TargetOutcome, goal: BenchGoal, all: TargetOutcome[]): GoalOutcome {
  if (goal.kind === 'at-most') return evaluateCeiling(target, goal);
  const other = all.find((t) => t.name === goal.against);
  const base = { target: target.name, label: goal.label, kind: goal.kind, against: goal.against };
  if (target.result === null || other?.result == null)
    return { ...base, value: null, status: 'not measured' };
  if (!target.valid || !other.valid) return { ...base, value: null, status: 'invalid' };
  if (goal.kind === 'throughput-ratio') {
    const value = target.result.throughputRps / other.result.throughputRps;
    return { ...base, value, status: value >= goal.atLeast ? 'met' : 'missed' };
  }
  const value = target.result.latencyP50Ms - other.result.latencyP50Ms;
  return { ...base, value, status: value <= goal.atMost ? 'met' : 'missed' };
}

/** An absolute ceiling on one number of the target's own valid run; a number it did not report is not measured. */
function evaluateCeiling(target: TargetOutcome, goal: Extract<BenchGoal, { kind: 'at-most' }>): GoalOutcome {
  const base = { target: target.name, label: goal.label, kind: goal.kind, against: null, metric: goal.metric };
  if (target.result === null) return { ...base, value: null, status: 'not measured' };
  if (!target.valid) return { ...base, value: null, status: 'invalid' };
  const { metric } = goal;
  const value =
    metric === 'latencyP50Ms' || metric === 'latencyP99Ms'
      ? target.result[metric]
      : metric === 'rssMb'
        ? (target.rssBytes === null ? undefined : target.rssBytes / 2 ** 20)
        : target.result.details?.[metric.slice('detail:'.length)];
  if (value === undefined) return { ...base, value: null, status: 'not measured' };
  return { ...base, value, status: value <= goal.atMost ? 'met' : 'missed' };
}

const fixed = (n: number, digits: number) => n.toFixed(digits);
/** A ratio to the baseline: three decimals below 0.1x, where two would round 0.015x to 0.01x. */
const times = (ratio: number) => `${fixed(ratio, ratio < 0.1 ? 3 : 2)}x`;
const mb = (bytes: number | null) => (bytes === null ? 'n/a' : fixed(bytes / 2 ** 20, 0));
/** CPU µs per request as a cell: whole microseconds, `–` when not measured. */
const us = (value: number | null | undefined) => (value == null ? '–' : fixed(value, 0));

/** An error as one table cell: its first line (process output follows it), pipes escaped. */
const cell = (text: string) => (text.split('\n')[0] ?? '').replaceAll('|', '\\|');

/** The run as markdown: one row per target with its ratio to the baseline, then the goals. */
export function renderMarkdown(report: BenchReport): string {
  const { machine, settings } = report;
  const baseline = report.targets.find((t) => t.name === report.baseline);
  const lines = [
    `Run ${report.date}: Node ${machine.node}, ${machine.cpus} x ${machine.cpuModel}; ` +
      `${settings.connections} connections, pipelining ${settings.pipelining}, ` +
      `${settings.warmupSecs} s warm-up + ${settings.durationSecs} s per target${settings.profiled ? ', CPU-PROFILED (slower)' : ''}; ` +
      `load average ${fixed(machine.loadAverage1m.start, 1)} -> ${fixed(machine.loadAverage1m.end, 1)}.`,
  ];
  const own = report.targets.filter(
    (t) => t.timing !== undefined && (t.timing.warmupSecs !== settings.warmupSecs || t.timing.durationSecs !== settings.durationSecs),
  );
  if (own.length > 0) {
    lines.push(`Targets with their own timing: ${own.map((t) => `${t.name} ${t.timing!.warmupSecs} s warm-up + ${t.timing!.durationSecs} s`).join(', ')}.`);
  }
  lines.push(
    '',
    `| Target | req/s | p50 ms | p99 ms | errors / timeouts / non-2xx | RSS MB | CPU µs/req | vs ${report.baseline} | Valid |`,
    '|---|---:|---:|---:|---|---:|---:|---:|---|',
  );
  for (const t of report.targets) {
    const r = t.result;
    if (r === null) {
      lines.push(
        `| ${t.name} | – | – | – | failed: ${cell(t.error ?? 'unknown')} | ${mb(t.rssBytes)} | – | – | no |`,
      );
      continue;
    }
    const ratio =
      baseline?.result != null && baseline.valid && t.valid && r.details === undefined
        ? times(r.throughputRps / baseline.result.throughputRps)
        : '–';
    lines.push(
      `| ${t.name} | ${fixed(r.throughputRps, 0)} | ${fixed(r.latencyP50Ms, 2)} | ${fixed(r.latencyP99Ms, 2)} | ` +
        `${r.errors} / ${r.timeouts} / ${r.non2xx} | ${mb(t.rssBytes)} | ${us(t.cpuUsPerRequest)} | ${ratio} | ${t.valid ? 'yes' : 'NO'} |`,
    );
  }
  const multi = report.targets.filter((t) => t.memory.length > 1);
  if (multi.length > 0) {
    lines.push('', '| Target | Process | RSS MB | CPU µs/req |', '|---|---|---:|---:|');
    for (const t of multi) {
      for (const m of t.memory) lines.push(`| ${t.name} | ${m.role} | ${mb(m.rssBytes)} | ${us(m.cpuUsPerRequest)} |`);
    }
  }
  const detailed = report.targets.filter((t) => t.result?.details !== undefined);
  if (detailed.length > 0) {
    lines.push('', '| Target | Details |', '|---|---|');
    for (const t of detailed) {
      const details = Object.entries(t.result?.details ?? {}).map(([k, v]) => `${k} ${Number.isInteger(v) ? v : fixed(v, 2)}`);
      lines.push(`| ${t.name} | ${details.join(', ')} |`);
    }
  }
  if (report.goals.length > 0) {
    lines.push('', '| Goal | Measured | Status |', '|---|---:|---|');
    for (const g of report.goals) {
      const value =
        g.value === null
          ? '–'
          : g.kind === 'throughput-ratio'
            ? times(g.value)
            : g.metric?.startsWith('detail:') === true
              ? String(g.value)
              : g.metric === 'rssMb'
                ? `${fixed(g.value, 0)} MB`
                : `${fixed(g.value, 2)} ms`;
      lines.push(`| ${g.label} | ${value} | ${g.status} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
