import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors/platform-error.ts';
import { parseDuration } from './duration.ts';

describe('parseDuration', () => {
  it.each([
    ['1s', 1_000],
    ['30m', 30 * 60_000],
    ['24h', 24 * 3_600_000],
    ['90d', 90 * 86_400_000],
    ['2w', 14 * 86_400_000],
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '0d', '-1d', '1.5h', '90', 'd', '1h30m', ' 1h', '1H', '1y', '99999999999999999w'])(
    'refuses %j with a ValidationError naming the value and the accepted forms',
    (text) => {
      let caught: unknown;
      try {
        parseDuration(text);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PlatformError);
      const error = caught as PlatformError;
      expect(error.category).toBe('ValidationError');
      expect(error.message).toContain(`'${text}'`);
      if (text !== '99999999999999999w') expect(error.message).toMatch(/s, m, h, d or w/);
    },
  );
});
