import type { CronJobSchedule } from '@agent-platform/contracts';
import { slotAfter } from '@agent-platform/queue';
import { repeatOf } from './cron-job-record.ts';

/** Cron slots are counted one by one; past this many, counting stops (a seconds cron down for a day). */
export const MAX_COUNTED_SLOTS = 10_000;

export interface SlotSpan {
  /** Slots strictly between the two instants (at most MAX_COUNTED_SLOTS). */
  count: number;
  /** True when counting stopped at MAX_COUNTED_SLOTS. */
  capped: boolean;
  first: number | null;
  last: number | null;
}

/**
 * The slots of `schedule` strictly after `afterMs` and strictly before `beforeMs`, by the rules
 * the queue fires them with (slot arithmetic of libs/queue): `every` slots are multiples of the
 * period since the epoch, counted exactly; cron slots are walked; an `at` job has one slot.
 */
export function slotsBetween(schedule: CronJobSchedule, afterMs: number, beforeMs: number): SlotSpan {
  const none: SlotSpan = { count: 0, capped: false, first: null, last: null };
  if (beforeMs <= afterMs + 1) return none;
  switch (schedule.kind) {
    case 'at': {
      const at = Date.parse(schedule.at);
      return at > afterMs && at < beforeMs ? { count: 1, capped: false, first: at, last: at } : none;
    }
    case 'every': {
      const period = schedule.every_secs * 1000;
      const firstIndex = Math.floor(afterMs / period) + 1;
      const lastIndex = Math.floor((beforeMs - 1) / period);
      if (lastIndex < firstIndex) return none;
      return {
        count: lastIndex - firstIndex + 1,
        capped: false,
        first: firstIndex * period,
        last: lastIndex * period,
      };
    }
    case 'cron': {
      const repeat = repeatOf(schedule);
      let count = 0;
      let first: number | null = null;
      let last: number | null = null;
      for (
        let slot = slotAfter(repeat, afterMs);
        slot !== null && slot < beforeMs;
        slot = slotAfter(repeat, slot)
      ) {
        if (count === MAX_COUNTED_SLOTS) return { count, capped: true, first, last };
        first ??= slot;
        last = slot;
        count += 1;
      }
      return { count, capped: false, first, last };
    }
  }
}
