import type { SweepReport } from '@agent-platform/contracts';
import type { HoldSet } from './hold-set.ts';

export type RetentionClass = 'audit' | 'usage' | 'transcripts' | 'runs';
export const RETENTION_CLASSES: readonly RetentionClass[] = ['audit', 'usage', 'transcripts', 'runs'];

/** One class's outcome in a sweep report; the sweeper fills it as it goes, so a failure keeps the counts so far. */
export type ClassSweep = SweepReport['classes']['audit'];

export const DAY_MS = 86_400_000;

/** What every class sweep is given (retention-service.ts makes one per sweep). */
export interface SweepContext {
  now: Date;
  /**
   * The holds in force as last read: to choose what to archive. What a batch deletes is filtered
   * by the holds `deleteBatch` hands it, never by these alone.
   */
  readonly holds: HoldSet;
  /** `[retention] batch_size`: items read or deleted per store call. */
  batchSize: number;
  /**
   * Renews this sweep's lock and throws `LostSweepLockError` when another process took it over
   * (this one stalled past its lease): called before every destructive step, so a stalled sweep
   * stops before it writes again.
   */
  stillHolder(): Promise<void>;
  /**
   * Runs one delete batch: renews the lock (throwing `LostSweepLockError` like `stillHolder`),
   * marks the batch in flight under the current hold epoch, re-reads the holds when one was placed
   * (or the config's changed) since they were last read, and hands them to `batch`, which must
   * decide what it deletes by them. A hold placed anywhere answers only once no batch begun
   * before it is in flight (sweep-lock.ts `fenceHolds`), so nothing it covers is deleted after.
   */
  deleteBatch<T>(batch: (holds: HoldSet) => Promise<T>): Promise<T>;
  /** Milestones (info): a segment archived, a class done. */
  log(context: Record<string, unknown>, message: string): void;
  /** Per-batch progress (debug). */
  progress(context: Record<string, unknown>, message: string): void;
}

export class LostSweepLockError extends Error {
  constructor(holder: string | null) {
    super(
      `the retention sweep lock was taken over${holder === null ? '' : ` by ${holder}`} (this sweep stalled past its lease); stopping`,
    );
    this.name = 'LostSweepLockError';
  }
}

/** A fresh result for a class whose period is `days` (0 = kept forever). */
export function startResult(days: number, now: Date): { result: ClassSweep; cutoff: string | null } {
  if (days <= 0)
    return { result: { status: 'kept_forever', cutoff: null, deleted: 0, held: 0 }, cutoff: null };
  const cutoff = new Date(now.getTime() - days * DAY_MS).toISOString();
  return { result: { status: 'done', cutoff, deleted: 0, held: 0 }, cutoff };
}
