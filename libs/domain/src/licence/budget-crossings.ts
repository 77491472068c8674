import type { Counters } from '@agent-platform/store';
import type { EventPublisher } from '../events/event-publisher.ts';

/** The thresholds that emit an event: 80 % (`licence.budget.warning`) and 100 % (`.exhausted`). */
const THRESHOLDS = [
  { pct: 80, kind: 'licence.budget.warning' },
  { pct: 100, kind: 'licence.budget.exhausted' },
] as const;

export interface BudgetMove {
  /** The budget's counter key (per licence period). */
  key: string;
  /** What the event names: `transactions:<workflow type>`, `spend:provider:<id>`, `spend:cloud`. */
  budget: string;
  /** The counter before and after the add, and the budget, in counter units. */
  before: number;
  after: number;
  limit: number;
  /** Counter units to the reported unit (1 for transactions, 1e6 for micro-USD). */
  scale: number;
  period_start: string;
}

/**
 * Emits the licence budget events of one counter move (docs/events.md): once per crossing of 80 %
 * and of 100 % in a licence period, never on every call. The crossing is claimed in the store
 * (`counters.add(..., {limit: 1})` on a marker per budget and threshold), so a counter that dips
 * (a released transaction) and rises again, or two nodes crossing together, emit once.
 */
export async function emitBudgetCrossings(counters: Counters, events: EventPublisher | undefined, move: BudgetMove): Promise<void> {
  if (events === undefined || move.limit <= 0) return;
  for (const { pct, kind } of THRESHOLDS) {
    const at = (move.limit * pct) / 100;
    if (!(move.before < at && move.after >= at)) continue;
    const marker = `events:budget:${move.key}:${pct}`;
    const { applied } = await counters.add(marker, 1, { limit: 1 });
    if (!applied) continue;
    await events.emit(kind, {
      id: `${kind}:${move.key}`,
      agent_id: null,
      data: {
        budget: move.budget,
        used: move.after / move.scale,
        limit: move.limit / move.scale,
        pct: Math.round((move.after / move.limit) * 1000) / 10,
        period_start: move.period_start,
      },
    });
  }
}
