import { startScheduleFleet } from '../schedule-fleet.ts';
import type { BenchGoal, BenchTarget } from '../target.ts';

/**
 * Issue 9 item 9: 1 000 schedules firing every 10 s for 2 minutes (unless `--duration` says
 * otherwise), with one and with two scheduler processes. Each slot's delivery to the agent
 * workers is seen on the bus: none twice, none missed, p99 of lateness at most 250 ms.
 */
const SCHEDULES = 1_000;
const EVERY_SECS = 10;
const TWO_MINUTES = 120;

const goals = (schedulers: number): BenchGoal[] => [
  {
    kind: 'at-most',
    metric: 'detail:duplicates',
    atMost: 0,
    label: `${schedulers} scheduler(s): slots delivered twice = 0`,
  },
  {
    kind: 'at-most',
    metric: 'detail:missed',
    atMost: 0,
    label: `${schedulers} scheduler(s): slots missed = 0`,
  },
  {
    kind: 'at-most',
    metric: 'latencyP99Ms',
    atMost: 250,
    label: `${schedulers} scheduler(s): p99 lateness <= 250 ms`,
  },
];

const target = (schedulers: number): BenchTarget => ({
  name: `fleet-schedules-${schedulers}`,
  description:
    `1 api + 1 agent worker + ${schedulers} scheduler${schedulers > 1 ? 's' : ''} (BullMQ), ` +
    `${SCHEDULES} schedules every ${EVERY_SECS} s on the local model; req/s = fires/s, latency = lateness`,
  goals: goals(schedulers),
  defaultDurationSecs: TWO_MINUTES,
  start: (options) =>
    startScheduleFleet({ schedulers, schedules: SCHEDULES, everySecs: EVERY_SECS }, options),
});

export const fleetSchedulesOne = target(1);
export const fleetSchedulesTwo = target(2);
