import { VALUE_CLASSES, type UsageSummary, type UsageView, type ValueClass, type ValueEvents } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { fromMicroUsd, toMicroUsd, type LicenceState } from '../licence/licence.ts';
import type { Clock } from '../time/clock.ts';
import { USAGE_TOTAL_KEYS, usageEventsLog, type UsageEvent } from './usage-events.ts';

/** GET /usage, /usage/summary and /usage/value-events (spec §Resources Usage; docs/usage.md). */
export interface UsageService {
  /** The current licence period, [period_start, period_end); zeros without a licence. */
  usage(): Promise<UsageView>;
  /** Everything ever recorded. */
  summary(): Promise<UsageSummary>;
  /** Value events in the last `window` seconds, and per week for the last `weeks` weeks. */
  valueEvents(query: { window: number; weeks: number }): Promise<ValueEvents>;
}

export interface UsageServiceDeps {
  store: Store;
  clock: Clock;
  /** The licence held now (its period bounds /usage). */
  licence: () => LicenceState;
}

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;

export function createUsageService(deps: UsageServiceDeps): UsageService {
  const log = usageEventsLog(deps.store);
  const eventsSince = async (since: Date): Promise<UsageEvent[]> =>
    log.list({ since: { field: 'at', value: since.toISOString() }, order: 'asc' });

  return {
    async usage() {
      const state = deps.licence();
      if (state.kind === 'none') return { total_input_tokens: 0, total_output_tokens: 0, total_requests: 0, total_cost_usd: 0 };
      const start = new Date(state.licence.period_start);
      const end = new Date(state.licence.period_end).toISOString();
      const totals = { input: 0, output: 0, requests: 0, micro: 0 };
      for (const event of await eventsSince(start)) {
        if (event.at >= end) continue;
        totals.input += event.input_tokens;
        totals.output += event.output_tokens;
        totals.requests += event.model_calls;
        totals.micro += toMicroUsd(event.cost_usd);
      }
      return {
        total_input_tokens: totals.input,
        total_output_tokens: totals.output,
        total_requests: totals.requests,
        total_cost_usd: fromMicroUsd(totals.micro),
      };
    },
    async summary() {
      const c = deps.store.counters;
      const [input, output, requests, micro] = await Promise.all([
        c.get(USAGE_TOTAL_KEYS.input_tokens),
        c.get(USAGE_TOTAL_KEYS.output_tokens),
        c.get(USAGE_TOTAL_KEYS.requests),
        c.get(USAGE_TOTAL_KEYS.cost_micro_usd),
      ]);
      return { period: 'all_time', input_tokens: input, output_tokens: output, requests, cost_usd: fromMicroUsd(micro) };
    },
    async valueEvents({ window, weeks }) {
      const now = deps.clock.now();
      const since = new Date(now.getTime() - window * 1000);
      const weekStarts = Array.from({ length: weeks }, (_, i) => new Date(mondayOf(now).getTime() - (weeks - 1 - i) * WEEK_MS));
      const from = new Date(Math.min(since.getTime(), weekStarts[0]!.getTime()));
      const untilIso = now.toISOString();
      const sinceIso = since.toISOString();
      const byClass = Object.fromEntries(VALUE_CLASSES.map((c) => [c, 0])) as Record<ValueClass, number>;
      const bySolution: Record<string, number> = {};
      const weekly = weekStarts.map((start) => ({ week_start: start.toISOString(), count: 0 }));
      let total = 0;
      for (const event of await eventsSince(from)) {
        if (event.workflow_type === null || event.at > untilIso) continue;
        const week = Math.floor((Date.parse(event.at) - weekStarts[0]!.getTime()) / WEEK_MS);
        const bucket = weekly[week];
        if (week >= 0 && bucket !== undefined) bucket.count += 1;
        if (event.at < sinceIso) continue;
        total += 1;
        bySolution[event.workflow_type] = (bySolution[event.workflow_type] ?? 0) + 1;
        if (event.value_class !== null && event.value_class in byClass) byClass[event.value_class as ValueClass] += 1;
      }
      return { window_secs: window, since: sinceIso, until: untilIso, total, by_class: byClass, by_solution: bySolution, weekly };
    },
  };
}

/** Monday 00:00 UTC of the week holding `t` (ISO weeks start on Monday). */
export function mondayOf(t: Date): Date {
  const midnight = Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate());
  const sinceMonday = (t.getUTCDay() + 6) % 7;
  return new Date(midnight - sinceMonday * DAY_MS);
}
