import { describe, expect, it } from 'vitest';
import { expiredCounter, expirySet, liveCounter, liveCountersUnder } from './counter-filters.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');

describe('MongoDB counter filters', () => {
  it('reads a counter only while it has not expired', () => {
    expect(liveCounter('k', NOW)).toEqual({ _id: 'k', _expires: { $not: { $lt: NOW } } });
    expect(expiredCounter('k', NOW)).toEqual({ _id: 'k', _expires: { $lt: NOW } });
  });

  it('lists a prefix as an _id range the index serves, never a regex', () => {
    expect(liveCountersUnder('ratelimit:', NOW)).toEqual({ _id: { $gte: 'ratelimit:', $lt: 'ratelimit;' }, _expires: { $not: { $lt: NOW } } });
    expect(liveCountersUnder('a%.*', NOW)._id).toEqual({ $gte: 'a%.*', $lt: 'a%.+' });
    expect(liveCountersUnder('', NOW)._id).toEqual({ $gte: '' });
  });

  it('sets the expiry an add gives as a Date for the TTL index, and nothing otherwise', () => {
    expect(expirySet('2026-11-24T12:01:00.000Z')).toEqual({ $set: { _expires: new Date('2026-11-24T12:01:00.000Z') } });
    expect(expirySet(undefined)).toEqual({});
    expect(() => expirySet('soon')).toThrow(TypeError);
  });
});
