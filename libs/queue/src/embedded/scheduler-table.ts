import type { Repeat, SchedulerInfo } from '../queue.ts';
import type { JobTable } from './job-table.ts';
import { firstSlot, latestSlot, normalizeRepeat, slotAfter, validateRepeat } from './repeat-slots.ts';
import type { SqliteDatabase } from './sqlite.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS schedulers (
  queue TEXT NOT NULL,
  id TEXT NOT NULL,
  repeat TEXT NOT NULL,
  data TEXT NOT NULL,
  next_at INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (queue, id)
);
CREATE INDEX IF NOT EXISTS schedulers_next ON schedulers (next_at);
`;

interface SchedulerRow {
  queue: string;
  id: string;
  repeat: string;
  data: string;
  next_at: number | null;
}

/**
 * The schedulers table. `next_at` is the next slot still to fire; firing a slot and moving
 * `next_at` past it happen in one `BEGIN IMMEDIATE` transaction, so with several processes on
 * the file each slot is enqueued once. The slot's job id `${schedulerId}:${slotIso}` guards the
 * same thing a second way.
 */
export class SchedulerTable {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly jobs: JobTable,
  ) {
    db.exec(SCHEMA);
  }

  /**
   * Creates or replaces a scheduler. Re-upserting an unchanged repeat (every process does so at
   * boot) keeps `next_at`, so a slot missed while the platform was down still gets its catch-up.
   */
  upsert(queue: string, id: string, repeat: Repeat, data: unknown, now: number): void {
    validateRepeat(repeat);
    const canonical = JSON.stringify(normalizeRepeat(repeat));
    const dataJson = JSON.stringify(data ?? null);
    this.db
      .transaction(() => {
        const existing = this.db.prepare('SELECT repeat FROM schedulers WHERE queue = ? AND id = ?').get(queue, id) as
          | Pick<SchedulerRow, 'repeat'>
          | undefined;
        if (existing?.repeat === canonical) {
          this.db.prepare('UPDATE schedulers SET data = ?, updated_at = ? WHERE queue = ? AND id = ?').run(dataJson, now, queue, id);
          return;
        }
        this.db
          .prepare('INSERT OR REPLACE INTO schedulers (queue, id, repeat, data, next_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(queue, id, canonical, dataJson, firstSlot(normalizeRepeat(repeat), now), now);
      })
      .immediate();
  }

  remove(queue: string, id: string): boolean {
    return this.db.prepare('DELETE FROM schedulers WHERE queue = ? AND id = ?').run(queue, id).changes > 0;
  }

  list(queue: string): SchedulerInfo[] {
    const rows = this.db.prepare('SELECT * FROM schedulers WHERE queue = ? ORDER BY id').all(queue) as SchedulerRow[];
    return rows.map((row) => ({
      id: row.id,
      repeat: JSON.parse(row.repeat) as Repeat,
      next_at: row.next_at === null ? null : new Date(row.next_at).toISOString(),
    }));
  }

  /**
   * Enqueues one job for every scheduler whose slot has come. After downtime only the latest
   * missed slot fires (one catch-up job, not a storm); the slots before it are skipped.
   * Returns how many jobs were enqueued.
   */
  fireDue(now: number): number {
    return this.db
      .transaction(() => {
        const due = this.db.prepare('SELECT * FROM schedulers WHERE next_at IS NOT NULL AND next_at <= ?').all(now) as SchedulerRow[];
        let fired = 0;
        for (const row of due) {
          const repeat = JSON.parse(row.repeat) as Repeat;
          const slot = latestSlot(repeat, row.next_at!, now);
          const slotAt = new Date(slot).toISOString();
          const added = this.jobs.insert(
            {
              queue: row.queue,
              id: `${row.id}:${slotAt}`,
              data: JSON.parse(row.data),
              runAt: slot,
              attempts: 1,
              backoffMs: 1000,
              slotAt,
              schedulerId: row.id,
            },
            now,
          );
          if (!added.duplicate) fired += 1;
          this.db
            .prepare('UPDATE schedulers SET next_at = ?, updated_at = ? WHERE queue = ? AND id = ?')
            .run(slotAfter(repeat, Math.max(now, slot)), now, row.queue, row.id);
        }
        return fired;
      })
      .immediate();
  }

  /** The earliest `next_at` after `now`, to time the next poll. */
  nextSlotAfter(now: number): number | undefined {
    const row = this.db.prepare('SELECT MIN(next_at) AS t FROM schedulers WHERE next_at > ?').get(now) as { t: number | null };
    return row.t ?? undefined;
  }
}
