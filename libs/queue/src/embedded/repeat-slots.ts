import { CronExpressionParser } from 'cron-parser';
import type { Repeat } from '../queue.ts';

/**
 * Slot arithmetic for schedulers. A slot is an instant (epoch ms) at which a scheduler fires.
 * Every process computes the same slots for the same repeat: `every` slots are multiples of
 * `every_ms` since the epoch (not counted from the upsert), cron slots follow the expression in
 * its zone, and an `at` scheduler has one slot.
 */

/** The repeat in one canonical spelling, so an unchanged upsert compares equal. */
export function normalizeRepeat(repeat: Repeat): Repeat {
  switch (repeat.kind) {
    case 'cron':
      return repeat.tz ? { kind: 'cron', expr: repeat.expr.trim(), tz: repeat.tz } : { kind: 'cron', expr: repeat.expr.trim() };
    case 'every':
      return { kind: 'every', every_ms: repeat.every_ms };
    case 'at':
      return { kind: 'at', at: new Date(repeat.at).toISOString() };
  }
}

/**
 * Throws an Error naming the offending expression when `repeat` cannot produce slots. Cron
 * takes 5 fields (minute precision) or 6 (leading seconds) and an optional IANA zone (spec D9).
 */
export function validateRepeat(repeat: Repeat): void {
  switch (repeat.kind) {
    case 'cron': {
      const fields = repeat.expr.trim().split(/\s+/).filter(Boolean);
      if (fields.length !== 5 && fields.length !== 6) {
        throw new Error(`invalid cron expression "${repeat.expr}": expected 5 or 6 fields, got ${fields.length}`);
      }
      if (repeat.tz && !isTimeZone(repeat.tz)) {
        throw new Error(`invalid time zone "${repeat.tz}" for cron expression "${repeat.expr}"`);
      }
      try {
        parseCron(repeat, Date.now());
      } catch (error) {
        throw new Error(`invalid cron expression "${repeat.expr}": ${(error as Error).message}`, { cause: error });
      }
      return;
    }
    case 'every':
      if (!Number.isInteger(repeat.every_ms) || repeat.every_ms <= 0) {
        throw new Error(`invalid every_ms ${repeat.every_ms}: expected a positive integer`);
      }
      return;
    case 'at':
      if (Number.isNaN(Date.parse(repeat.at))) throw new Error(`invalid at time "${repeat.at}": expected an ISO time`);
      return;
    default:
      throw new Error(`unknown repeat kind ${JSON.stringify((repeat as { kind?: unknown }).kind)}`);
  }
}

/**
 * The first slot of a newly created or changed scheduler. An `at` in the past still fires once
 * (at the next poll), like a one-shot timer whose time has come.
 */
export function firstSlot(repeat: Repeat, nowMs: number): number | null {
  return repeat.kind === 'at' ? Date.parse(repeat.at) : slotAfter(repeat, nowMs);
}

/** The first slot strictly after `afterMs`, or null when the repeat has none left. */
export function slotAfter(repeat: Repeat, afterMs: number): number | null {
  switch (repeat.kind) {
    case 'at': {
      const at = Date.parse(repeat.at);
      return at > afterMs ? at : null;
    }
    case 'every':
      return (Math.floor(afterMs / repeat.every_ms) + 1) * repeat.every_ms;
    case 'cron':
      try {
        return parseCron(repeat, afterMs).next().getTime();
      } catch {
        return null;
      }
  }
}

/**
 * The latest slot in `[dueMs, nowMs]`, where `dueMs` is a slot that has come. Used so that
 * after downtime a scheduler fires one catch-up slot (the latest missed one), not one job for
 * every slot it slept through.
 */
export function latestSlot(repeat: Repeat, dueMs: number, nowMs: number): number {
  let latest: number;
  switch (repeat.kind) {
    case 'at':
      return dueMs;
    case 'every':
      latest = Math.floor(nowMs / repeat.every_ms) * repeat.every_ms;
      break;
    case 'cron':
      // prev() is strictly before its start, so start 1 ms later to include a slot at `nowMs`.
      latest = parseCron(repeat, nowMs + 1).prev().getTime();
      break;
  }
  return Math.max(latest, dueMs);
}

function parseCron(repeat: Extract<Repeat, { kind: 'cron' }>, currentMs: number) {
  return CronExpressionParser.parse(repeat.expr.trim(), { currentDate: new Date(currentMs), tz: repeat.tz ?? 'UTC' });
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
