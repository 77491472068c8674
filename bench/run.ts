import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { checkOnce, isValid, runLoad } from './load.ts';
import { readRssBytes, ROOT } from './node-process.ts';
import { cpuMs, cpuPerRequest } from './process-cpu.ts';
import { createReport, renderMarkdown, type TargetOutcome } from './report.ts';
import type { BenchTarget, LoadResult, LoadSettings, StartedTarget } from './target.ts';
import { helloWorld } from './targets/hello-world.ts';
import { TARGETS } from './targets/index.ts';

// `npm run bench [-- flags]`: every target in one invocation, each started, warmed up, measured
// and stopped in turn, then one report (stdout, bench/results/<stamp>.json and .md).
const USAGE = `Usage: npm run bench -- [options]
  --connections <n>   concurrent connections (default 10)
  --duration <secs>   measured seconds per target (default 10; the schedule targets 120)
  --warmup <secs>     unmeasured seconds before each run (default 3; the one-caller latency targets 30)
  --pipelining <n>    requests in flight per connection (default 1)
  --targets <a,b>     only these targets (default all: ${TARGETS.map((t) => t.name).join(', ')})
  --profile           run the servers with --cpu-prof; profiles go to bench/results/<stamp>-profiles/
  --help`;

const { values: flags } = parseArgs({
  options: {
    connections: { type: 'string', default: '10' },
    // No default here: a target may have its own (BenchTarget.defaultDurationSecs) unless this is given.
    duration: { type: 'string' },
    // No default here either: a target may have its own (BenchTarget.defaultWarmupSecs).
    warmup: { type: 'string' },
    pipelining: { type: 'string', default: '1' },
    targets: { type: 'string' },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}

function positiveInt(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be an integer >= ${min}, got "${text}"\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

const settings: LoadSettings = {
  connections: positiveInt('connections', flags.connections, 1),
  durationSecs: positiveInt('duration', flags.duration ?? '10', 1),
  pipelining: positiveInt('pipelining', flags.pipelining, 1),
};
const DEFAULT_WARMUP_SECS = 3;
const warmupSecs = flags.warmup === undefined ? undefined : positiveInt('warmup', flags.warmup, 0);
const selected = selectTargets(flags.targets);
const startedAt = new Date();
const loadAtStart = loadavg()[0] ?? 0;
const stamp = startedAt
  .toISOString()
  .replace(/\.\d{3}Z$/, 'Z')
  .replaceAll(':', '-');
const resultsDir = join(ROOT, 'bench', 'results');

function selectTargets(list: string | undefined): BenchTarget[] {
  if (list === undefined) return TARGETS;
  const names = list.split(',').map((n) => n.trim());
  const unknown = names.filter((n) => !TARGETS.some((t) => t.name === n));
  if (unknown.length > 0) {
    console.error(`unknown target(s): ${unknown.join(', ')}\n${USAGE}`);
    process.exit(2);
  }
  return TARGETS.filter((t) => names.includes(t.name));
}

/** The measured run, and the CPU its processes spent on it (the warm-up left out). */
async function measure(
  target: BenchTarget,
  started: StartedTarget,
): Promise<{ result: LoadResult; cpu: ReturnType<typeof cpuPerRequest>; timing: TargetOutcome['timing'] }> {
  const run = (s: LoadSettings) =>
    started.measure ? started.measure(s) : runLoad(started.urls, started.request, s);
  // Even a target that measures itself exposes the HTTP request it stands beside: one 2xx first.
  await checkOnce(started.urls, started.request);
  const warmup = warmupSecs ?? target.defaultWarmupSecs ?? DEFAULT_WARMUP_SECS;
  if (warmup > 0) await run({ ...settings, durationSecs: warmup });
  const durationSecs = (flags.duration === undefined ? target.defaultDurationSecs : undefined) ?? settings.durationSecs;
  const before = await cpuMs(started.processes);
  const result = await run({ ...settings, durationSecs });
  const after = await cpuMs(started.processes);
  return { result, cpu: cpuPerRequest(before, after, result.requests), timing: { warmupSecs: warmup, durationSecs } };
}

async function benchOne(target: BenchTarget): Promise<TargetOutcome> {
  const base = {
    name: target.name,
    description: target.description,
    ...(target.goal ? { goal: target.goal } : {}),
    ...(target.goals ? { goals: target.goals } : {}),
  };
  const nodeFlags = flags.profile
    ? ['--cpu-prof', `--cpu-prof-dir=${join(resultsDir, `${stamp}-profiles`, target.name)}`]
    : [];
  let started: StartedTarget | undefined;
  try {
    started = await target.start({ nodeFlags });
    const { result, cpu, timing } = await measure(target, started);
    const memory = await Promise.all(
      started.processes.map(async (p) => ({
        role: p.role,
        rssBytes: await readRssBytes(p.pid),
        cpuUsPerRequest: cpu.byRole.get(p.role) ?? null,
      })),
    );
    const rssBytes = memory.some((m) => m.rssBytes === null)
      ? null
      : memory.reduce((sum, m) => sum + (m.rssBytes ?? 0), 0);
    return { ...base, result, timing, valid: isValid(result), rssBytes, memory, cpuUsPerRequest: cpu.total };
  } catch (error) {
    return {
      ...base,
      result: null,
      valid: false,
      rssBytes: null,
      memory: [],
      error: error instanceof Error ? error.message : String(error),
    };
  } finally {
    // A target that will not stop must not take the other targets' results down with it.
    await started?.stop().catch((error: unknown) => console.error(`  could not stop ${target.name}:`, error));
  }
}

const outcomes: TargetOutcome[] = [];
for (const target of selected) {
  console.log(`- ${target.name}: ${target.description}`);
  const outcome = await benchOne(target);
  const r = outcome.result;
  console.log(
    r === null
      ? `  FAILED: ${outcome.error}`
      : `  ${r.throughputRps.toFixed(0)} req/s, p50 ${r.latencyP50Ms.toFixed(2)} ms, p99 ${r.latencyP99Ms.toFixed(2)} ms` +
          (outcome.valid
            ? ''
            : ` — INVALID: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx`) +
          (r.details === undefined ? '' : `\n  ${JSON.stringify(r.details)}`),
  );
  outcomes.push(outcome);
}

const report = createReport(
  startedAt,
  { ...settings, warmupSecs: warmupSecs ?? DEFAULT_WARMUP_SECS, profiled: flags.profile },
  helloWorld.name,
  outcomes,
  loadAtStart,
);
const markdown = renderMarkdown(report);
await mkdir(resultsDir, { recursive: true });
await writeFile(join(resultsDir, `${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
await writeFile(join(resultsDir, `${stamp}.md`), markdown);
console.log(`\n${markdown}\nwritten: bench/results/${stamp}.json, bench/results/${stamp}.md`);
// An invalid or failed target is a failed bench run; a missed goal is a finding, not a failure.
process.exitCode = outcomes.every((o) => o.valid) ? 0 : 1;
