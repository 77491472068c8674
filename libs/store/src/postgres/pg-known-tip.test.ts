import { describe, expect, it } from 'vitest';
import { KnownTip } from './pg-known-tip.ts';
import type { LogEntry } from '../store.ts';

describe('KnownTip', () => {
  it('guesses nothing before this process wrote, then the entry it wrote last', () => {
    const tip = new KnownTip();
    expect(tip.guess()).toBeUndefined();
    tip.wrote({ seq: 1, a: 1 } as LogEntry<{ a: number }>);
    tip.wrote({ seq: 2, a: 2 } as LogEntry<{ a: number }>);
    expect(tip.guess()).toEqual({ seq: 2, a: 2 });
  });

  it('stops guessing once guesses miss more often than they hold, probing one append in 16, and guesses again once probes hold', () => {
    const tip = new KnownTip();
    tip.wrote({ seq: 7 });
    let guesses = 0;
    // Another process appends between every two of this one's: every guess misses.
    for (let i = 0; i < 64; i++) {
      if (tip.guess() !== undefined) {
        guesses += 1;
        tip.guessed(false);
      }
    }
    // The first misses bring the hit rate under one half (1 -> 0.8 -> 0.64 -> 0.51 -> 0.41), then one probe per 16 appends.
    expect(guesses).toBeGreaterThanOrEqual(4);
    expect(guesses).toBeLessThanOrEqual(4 + Math.ceil(60 / 16));
    // Alone on the log again: the probes hold and guessing resumes for every append.
    let answered = 0;
    for (let i = 0; i < 64 && answered < 3; i++) {
      if (tip.guess() !== undefined) {
        tip.guessed(true);
        answered += 1;
      }
    }
    expect(answered).toBe(3);
    let every = 0;
    for (let i = 0; i < 10; i++) if (tip.guess() !== undefined) every += 1;
    expect(every).toBe(10);
  });
});
