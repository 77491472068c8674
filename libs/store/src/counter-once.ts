import type { CounterOnce } from './store.ts';

/** `once.until` as a Date; a TypeError naming it when it is not an ISO timestamp. */
export function onceUntil(once: CounterOnce): Date {
  const until = new Date(once.until);
  if (Number.isNaN(until.getTime())) throw new TypeError(`counters: once.until must be an ISO timestamp, got ${JSON.stringify(once.until)}`);
  return until;
}
