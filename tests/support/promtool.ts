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
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total += Number(match[3]);
  }
  return total;
}
