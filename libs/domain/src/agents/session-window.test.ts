import { describe, expect, it } from 'vitest';
import type { SessionTurn } from './session-store.ts';
import { newestTurnsWithin, utf8Bytes } from './session-window.ts';

const turn = (content: string): SessionTurn => ({ role: 'user', content, at: 't' });

describe('newestTurnsWithin', () => {
  it('keeps the newest turns within both the turn and the byte limit, oldest first', () => {
    const turns = ['aaaa', 'bb', 'cc', 'dd'].map(turn);
    expect(newestTurnsWithin(turns, 10, 6).map((t) => t.content)).toEqual(['bb', 'cc', 'dd']);
    expect(newestTurnsWithin(turns, 2, 100).map((t) => t.content)).toEqual(['cc', 'dd']);
    expect(newestTurnsWithin(turns, 0, 100)).toEqual([]);
  });

  it('counts UTF-8 bytes, and stops at the first turn that does not fit so the context stays contiguous', () => {
    const turns = ['x', 'éééé', 'y'].map(turn);
    expect(utf8Bytes('éééé')).toBe(8);
    expect(newestTurnsWithin(turns, 10, 8).map((t) => t.content)).toEqual(['y']);
    expect(newestTurnsWithin([turn('z'.repeat(10))], 10, 9)).toEqual([]);
  });
});
