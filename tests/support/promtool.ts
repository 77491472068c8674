import { spawnSync } from 'node:child_process';

/**
 * Runs `promtool check metrics` (Debian package `prometheus`) on an exposition text and returns
 * its complaints: '' when Prometheus's linter accepts every metric.
 */
export function promtoolCheckMetrics(binary: string, text: string): string {
  const run = spawnSync(binary, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  return run.status === 0 ? '' : `${run.stdout}${run.stderr}`.trim() || `promtool exited with ${run.status}`;
}

/** Runs `promtool check rules <files>`; '' when they are valid. */
export function promtoolCheckRules(binary: string, files: string[]): string {
  const run = spawnSync(binary, ['check', 'rules', ...files], { encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  return run.status === 0 ? '' : `${run.stdout}${run.stderr}`.trim();
}

/** The value of one sample (`name{labels}`), summed over the samples whose labels include `labels`; 0 when none. */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total += Number(match[3]);
  }
  return total;
}

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
]);

/**
 * The metric names a PromQL expression reads (for checking a dashboard or alert rules against a
 * live /metrics): strings, label matchers, ranges, `by (...)` clauses, variables and function
 * calls are removed; what is left are metric names. `up` (made by Prometheus) is left out.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?/g)) {
    const [, name, call] = match;
    if (
      name === undefined ||
      call !== undefined ||
      PROMQL_WORDS.has(name) ||
      name === 'up' ||
      /^\d/.test(name)
    )
      continue;
    names.add(name);
  }
  return [...names];
}

/** Whether an exposition text declares `name` (a histogram's `_bucket`/`_sum`/`_count` by its base name). */
export function declares(text: string, name: string): boolean {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return text.includes(`# TYPE ${name} `) || text.includes(`# TYPE ${base} histogram`);
}
