import type { InvocationSourceWire } from '@agent-platform/contracts';

/**
 * The name of a source as `by_source` rows and usage events show it: the string itself (`Api`,
 * `Chat`, `Workflow`), or the key of an object source (`{"Cron": {...}}` -> `Cron`).
 */
export function sourceName(source: InvocationSourceWire): string {
  if (typeof source === 'string') return source;
  return Object.keys(source)[0] ?? 'Unknown';
}
