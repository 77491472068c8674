import type { LogEntry } from '../store.ts';
import { encodeJson } from './mongo-query.ts';

/**
 * The append-log algorithm, written against two operations so that its retry path is
 * unit-tested without a server:
 *
 * 1. read the tip (highest seq), 2. `build(tip)`, 3. insert the entry with `_id = tip.seq + 1`.
 *
 * `_id` is unique, so of all writers that read the same tip exactly one insert succeeds; the
 * others get a duplicate key, re-read the tip and call `build` again (the port allows that).
 * The newest entry is never deleted (`dropBefore` stops below the tip; retention removes only
 * older entries), so a successful insert of `tip.seq + 1` proves the tip was still `tip` at that
 * moment: no gap (seq - 1 existed), no fork (seq did not), and the builder saw the true tip. That
 * makes appends linearizable across every process sharing the database.
 */
export interface AppendOps<T> {
  readTip(): Promise<LogEntry<T> | null>;
  /** Inserts the entry (JSON text and parsed) at `seq`; false when `seq` is already taken (duplicate key). */
  tryInsert(seq: number, entry: { body: string; json: T }): Promise<boolean>;
  /** Waits a little before the next attempt so contending processes spread out. */
  backoff(attempt: number): Promise<void>;
}

/**
 * In-process appends are queued (see `SerialQueue`), so only other processes contend here; each
 * lost round means another process's entry landed, so this bound is only hit under a storm.
 */
export const MAX_APPEND_ATTEMPTS = 100;

export async function appendOptimistically<T extends object>(
  ops: AppendOps<T>,
  build: (tip: LogEntry<T> | null) => T,
  log: string,
): Promise<LogEntry<T>> {
  for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
    if (attempt > 0) await ops.backoff(attempt);
    const tip = await ops.readTip();
    const entry = buildEntry(build, tip);
    const seq = (tip?.seq ?? 0) + 1;
    if (await ops.tryInsert(seq, entry)) return { ...entry.json, seq };
  }
  throw new Error(`append to log '${log}': lost ${MAX_APPEND_ATTEMPTS} races in a row to other writers`);
}

/** `build(tip)`, checked to be a JSON object and encoded, without a `seq` (the append assigns it). */
export function buildEntry<T extends object>(build: (tip: LogEntry<T> | null) => T, tip: LogEntry<T> | null): { body: string; json: T } {
  const built = build(tip);
  if (typeof built !== 'object' || built === null || Array.isArray(built)) {
    throw new TypeError('append: build must return a JSON object');
  }
  // `seq` is assigned here; a copy left over from spreading the tip must not be stored.
  const { seq: _ignored, ...rest } = built as T & { seq?: unknown };
  return encodeJson(rest as T, 'append: the built entry');
}

/** Up to `2^attempt` ms (capped at 50), randomised so two losers do not collide again in step. */
export function jitterMs(attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(50, 2 ** attempt));
}

/**
 * Runs tasks one after another, in call order. Appends to one log from one process go through
 * one queue, so they never race each other for the same seq (200 concurrent appends would
 * otherwise cost ~20 000 failed inserts); a failed task does not stop the ones behind it.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<R>(task: () => Promise<R>): Promise<R> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
