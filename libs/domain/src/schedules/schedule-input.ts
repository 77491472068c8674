import type { CronJobSchedule, OverlapPolicy } from '@agent-platform/contracts';
import { validateRepeat } from '@agent-platform/queue';
import { Errors } from '../errors/errors.ts';
import { repeatOf } from './cron-job-record.ts';

/** What both create routes take (spec: `expression` and `prompt`; the rest is ours, docs/schedules.md). */
export interface ScheduleInput {
  expression?: string | undefined;
  tz?: string | undefined;
  every_secs?: number | undefined;
  at?: string | undefined;
  prompt: string;
  overlap?: OverlapPolicy | undefined;
}

/** Bounds of an `at` instant: a Date holds far more, but slot arithmetic must stay in ISO range. */
const MIN_AT = Date.parse('1970-01-01T00:00:00Z');
const MAX_AT = Date.parse('9999-12-31T23:59:59Z');

/**
 * The CronJob `schedule` of a create request, or 400 ValidationError naming the problem: exactly
 * one of `expression`, `every_secs`, `at`; a cron expression of 5 or 6 fields in an IANA zone,
 * UTC when absent (DECISIONS D9); `tz` only with `expression`.
 */
export function parseSchedule(input: ScheduleInput): CronJobSchedule {
  const given = (['expression', 'every_secs', 'at'] as const).filter((field) => input[field] !== undefined);
  if (given.length === 0) {
    throw Errors.validation("missing required field 'expression' (or, instead of it, 'every_secs' or 'at')", {
      field: 'expression',
      rule: 'required',
    });
  }
  if (given.length > 1)
    throw Errors.validation(
      `give exactly one of 'expression', 'every_secs' and 'at', not ${given.join(' and ')}`,
      { fields: given },
    );
  if (input.tz !== undefined && input.expression === undefined)
    throw Errors.validation("'tz' applies only to a cron 'expression'", { field: 'tz' });

  let schedule: CronJobSchedule;
  if (input.expression !== undefined) {
    const tz = input.tz === undefined ? null : ianaZone(input.tz);
    schedule = { kind: 'cron', expr: input.expression.trim(), tz };
  } else if (input.every_secs !== undefined) {
    schedule = { kind: 'every', every_secs: input.every_secs };
  } else {
    schedule = { kind: 'at', at: instant(input.at ?? '') };
  }
  try {
    validateRepeat(repeatOf(schedule));
  } catch (error) {
    // The queue's rule (5 or 6 fields, parseable, a known zone) is the one that fires it.
    throw Errors.validation((error as Error).message, {
      field: schedule.kind === 'cron' ? 'expression' : given[0],
    });
  }
  return schedule;
}

/**
 * An IANA zone name, as given. Refused: unknown names, and UTC offsets (`+01:00`), which newer
 * runtimes accept as zones but are not IANA names (D9).
 */
export function ianaZone(tz: string): string {
  const refuse = () =>
    Errors.validation(
      `invalid time zone '${tz.slice(0, 64)}': expected an IANA zone name such as 'Europe/Paris' or 'UTC'`,
      { field: 'tz' },
    );
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz)) throw refuse();
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw refuse();
  }
  return tz;
}

/** An ISO 8601 instant with a date and a time, normalized to UTC. */
function instant(value: string): string {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms) || ms < MIN_AT || ms > MAX_AT) {
    throw Errors.validation(
      `invalid 'at' '${value.slice(0, 64)}': expected an ISO 8601 instant such as '2030-01-01T09:00:00Z'`,
      { field: 'at' },
    );
  }
  return new Date(ms).toISOString();
}
