import { describe, expect, it } from 'vitest';
import {
  scheduleStats,
  slotsIn,
  toLoadResult,
  type Delivery,
  type LoggedFire,
  type SlotRun,
} from './schedule-stats.ts';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const window = {
  schedules: [
    { id: 'a', offsetMs: 0 },
    { id: 'b', offsetMs: 0 },
  ],
  everyMs: 10_000,
  startMs: T0,
  endMs: T0 + 30_000,
};
const delivery = (id: string, slot: number, lateMs: number): Delivery => ({
  schedule_id: id,
  slot_at: iso(slot),
  at: slot + lateMs,
});
const run = (id: string, slot: number, lateMs: number, done = true): SlotRun => ({
  schedule_id: id,
  slot_at: iso(slot),
  done,
  claimed_at: slot + lateMs,
});
const fire = (id: string, slot: number, outcome: string, extra: Partial<LoggedFire> = {}): LoggedFire => ({
  schedule_id: id,
  slot_at: iso(slot),
  outcome,
  late_ms: outcome === 'fired' ? 5 : null,
  missed_count: 0,
  recorded_at: iso(slot + 5),
  finished_at: outcome === 'running' ? null : iso(slot + 25),
  ...extra,
});

describe('schedule stats', () => {
  it('takes the every slots of a window, start included, end excluded', () => {
    expect(slotsIn(window)).toEqual([T0, T0 + 10_000, T0 + 20_000]);
    expect(slotsIn({ everyMs: 10_000, startMs: T0 + 1, endMs: T0 + 3_000 })).toEqual([]);
    expect(slotsIn(window, 3_000)).toEqual([T0 + 3_000, T0 + 13_000, T0 + 23_000]);
  });

  it('takes each schedule at its own offset: a slot off it is not due', () => {
    const spread = {
      ...window,
      schedules: [
        { id: 'a', offsetMs: 0 },
        { id: 'b', offsetMs: 5_000 },
      ],
    };
    const stats = scheduleStats(spread, [delivery('b', T0 + 5_000, 7), delivery('b', T0, 1)], [], []);
    expect(stats).toMatchObject({ expected: 6, fired: 1, duplicates: 0, missed: 5, lateMs: [7] });
  });

  it('counts what reached the workers: a slot delivered twice is one fire and one duplicate, a slot never delivered is missed', () => {
    const deliveries = [
      delivery('a', T0, 10),
      delivery('a', T0 + 10_000, 30),
      delivery('a', T0 + 10_000, 31_000), // the same slot again, later
      delivery('a', T0 + 20_000, 20),
      delivery('b', T0, 40),
      // b's second slot never came
      delivery('b', T0 + 20_000, 50),
      delivery('a', T0 - 10_000, 5), // before the window
      delivery('a', T0 + 30_000, 5), // after it
      delivery('c', T0, 5), // another schedule
    ];
    const stats = scheduleStats(window, deliveries, [], []);
    expect(stats).toMatchObject({ expected: 6, fired: 5, duplicates: 1, missed: 1 });
    // Lateness of each slot's FIRST delivery only.
    expect(stats.lateMs.sort((x, y) => x - y)).toEqual([10, 20, 30, 40, 50]);
  });

  it('counts the slots the agent ran from done idempotency records, and the fire log by outcome', () => {
    const runs = [
      run('a', T0, 12),
      run('a', T0 + 10_000, 15, false),
      run('b', T0, 40),
      run('b', T0 - 10_000, 3),
    ];
    const fires = [
      fire('a', T0, 'fired'),
      fire('a', T0, 'duplicate'),
      fire('a', T0 + 10_000, 'running'),
      fire('b', T0, 'fired', { late_ms: 900 }),
      fire('b', T0 + 10_000, 'missed', { missed_count: 2 }),
      fire('b', T0 + 20_000, 'failed'),
      fire('b', T0 - 10_000, 'fired'),
    ];
    const stats = scheduleStats(window, [], runs, fires);
    expect(stats.ran).toBe(2);
    expect(stats.runStartLateMs).toEqual([12, 40]);
    expect(stats.log).toEqual({
      fired: 2,
      duplicate: 1,
      missed: 2,
      skipped_overlap: 0,
      failed: 1,
      refused: 0,
      running: 1,
      lateMs: [5, 900],
      heldMs: [20, 20],
    });
  });

  it('maps a window into a LoadResult: fires as requests, lateness as latency, failed fires as errors, unsettled ones as timeouts', () => {
    const deliveries = [delivery('a', T0, 100), delivery('b', T0, 300), delivery('a', T0 + 10_000, 200)];
    const fires = [fire('a', T0, 'fired'), fire('b', T0, 'refused'), fire('a', T0 + 10_000, 'running')];
    const result = toLoadResult(scheduleStats(window, deliveries, [], fires), window, { schedulers: 2 });
    expect(result).toMatchObject({
      requests: 3,
      throughputRps: 0.1,
      latencyP50Ms: 200,
      latencyP99Ms: 300,
      errors: 1,
      timeouts: 1,
      non2xx: 0,
    });
    expect(result.details).toMatchObject({
      schedulers: 2,
      expected: 6,
      fired: 3,
      duplicates: 0,
      missed: 3,
      log_fired: 1,
    });
  });
});
