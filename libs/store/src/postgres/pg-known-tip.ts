import type { LogEntry } from '../store.ts';

/** The weight of the newest guess in the running hit rate. */
const HIT_RATE_WEIGHT = 0.2;
/** Below this hit rate a guess costs more round trips than it saves (a miss is one statement lost). */
const GUESS_WHEN_HIT_RATE_ABOVE = 0.5;
/** While guessing does not pay, one append in this many still guesses, to notice when it pays again. */
const PROBE_EVERY = 16;

/**
 * The tip of one append log as this process last wrote it, and whether building on it without
 * reading the tip first has been paying off (pg-append-log.ts). Alone on a log (an all-in-one) every
 * guess holds and each append saves its tip read; in a fleet whose processes append to the same log
 * by turns most guesses miss (each miss costs one statement), so after a few misses this process
 * reads the tip first again and only probes now and then.
 */
export class KnownTip {
  private entry: LogEntry<unknown> | undefined;
  private hitRate = 1;
  private sinceProbe = 0;

  /** The tip to build on without reading it, or undefined: read it. */
  guess(): LogEntry<unknown> | undefined {
    if (this.entry === undefined) return undefined;
    if (this.hitRate > GUESS_WHEN_HIT_RATE_ABOVE) return this.entry;
    this.sinceProbe += 1;
    if (this.sinceProbe < PROBE_EVERY) return undefined;
    this.sinceProbe = 0;
    return this.entry;
  }

  /** How the last guess went. */
  guessed(held: boolean): void {
    this.hitRate = this.hitRate * (1 - HIT_RATE_WEIGHT) + (held ? HIT_RATE_WEIGHT : 0);
  }

  /** The entry this process just appended: the tip, as far as it knows. */
  wrote(entry: LogEntry<unknown>): void {
    this.entry = entry;
  }
}
