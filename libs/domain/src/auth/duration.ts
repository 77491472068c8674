import { Errors } from '../errors/errors.ts';

const UNIT_MS = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

const FORMS = 'a positive whole number followed by s, m, h, d or w (e.g. 90d, 24h, 30m)';

/**
 * Parses an expiry duration such as `90d`, `24h`, `30m` (spec §Endpoints "Authentication and
 * keys"; `s` and `w` are ours) into milliseconds. Only a positive integer and one unit are
 * accepted: `1.5h`, `0d`, `-1d`, `1h30m` or a bare number are refused rather than guessed at,
 * because a key that expires at an unintended time is a security bug either way.
 */
export function parseDuration(text: string): number {
  const match = /^([1-9][0-9]*)([smhdw])$/.exec(text);
  const amount = match?.[1];
  const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
  if (amount === undefined || unit === undefined) {
    throw Errors.validation(`invalid duration '${text.slice(0, 40)}': expected ${FORMS}`, {
      field: 'expires_in',
      value: text.slice(0, 40),
    });
  }
  const ms = Number(amount) * UNIT_MS[unit];
  if (!Number.isSafeInteger(ms)) {
    throw Errors.validation(`invalid duration '${text.slice(0, 40)}': too large`, {
      field: 'expires_in',
      value: text.slice(0, 40),
    });
  }
  return ms;
}
