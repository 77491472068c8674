import type { Store } from '@agent-platform/store';
import { toMicroUsd } from '../licence/licence.ts';

/**
 * One successful invocation as usage sees it (log `usage_events`, oldest first). Tokens and cost
 * cover every model call of the invocation (the tool loop may make several).
 */
export interface UsageEvent {
  /** ISO 8601 UTC, when the invocation finished. */
  at: string;
  agent_id: string;
  provider_id: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** Model calls made: what `total_requests` counts. */
  model_calls: number;
  cost_usd: number;
  /** The invocation's workflow type; null outside any. An event with one is a value event. */
  workflow_type: string | null;
  /** The value class of the workflow type (value-class.ts), or null. */
  value_class: string | null;
  source: string;
  /**
   * Set on the value event of a workflow run (docs/workflows.md "Licence"): one per run that
   * Completed or was Escalated, with no tokens and no cost of its own (its steps recorded theirs).
   */
  run_id?: string;
}

export const USAGE_EVENTS_LOG = 'usage_events';

/**
 * Running all-time totals in the store's counters, so /usage/summary reads four numbers instead
 * of the whole log. Cost is kept in integer micro-USD like the licence counters.
 */
export const USAGE_TOTAL_KEYS = {
  input_tokens: 'usage:all:input_tokens',
  output_tokens: 'usage:all:output_tokens',
  requests: 'usage:all:requests',
  cost_micro_usd: 'usage:all:cost_micro_usd',
} as const;

export function usageEventsLog(store: Store) {
  return store.log<UsageEvent>(USAGE_EVENTS_LOG, { indexes: ['agent_id', 'workflow_type'] });
}

/**
 * Appends the event and adds it to the all-time totals (submitted together; a zero, such as the cost of
 * the `local` provider, is not written). The log is an append-only sequence (rather than a
 * collection) because every reader asks for "events since t", which the log answers with an
 * ordered range read.
 */
export async function recordUsageEvent(store: Store, event: UsageEvent): Promise<void> {
  // Submitted together: one group commit of the embedded store for both (docs/performance.md).
  await Promise.all([
    usageEventsLog(store).append(() => event),
    store.counters.addMany([
      { key: USAGE_TOTAL_KEYS.input_tokens, delta: event.input_tokens },
      { key: USAGE_TOTAL_KEYS.output_tokens, delta: event.output_tokens },
      { key: USAGE_TOTAL_KEYS.requests, delta: event.model_calls },
      { key: USAGE_TOTAL_KEYS.cost_micro_usd, delta: toMicroUsd(event.cost_usd) },
    ]),
  ]);
}
