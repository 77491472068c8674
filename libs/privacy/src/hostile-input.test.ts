import {
  DEFAULT_CLAIM_NUMBER_PATTERNS,
  DEFAULT_PII_CATEGORIES,
  DEFAULT_POLICY_NUMBER_PATTERNS,
  type PiiCategory,
} from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import { createPiiDetector } from './pii-detector.ts';
import { corpusMessage, NAME_CORPUS, PII_CORPUS } from './testing/pii-corpus.ts';

/**
 * Text built to make a detector's work grow faster than its length: a regular expression that can
 * split one run of characters in many ways (catastrophic backtracking), or a tokenizer that rescans
 * a word per character. No absolute timings (they flake on a loaded machine): each shape is timed
 * at doubling sizes, and doubling the input must not much more than double the time (a quadratic
 * cost quadruples it, and is caught long before it takes seconds); at 64 KB it must cost about as
 * much as ordinary text of that size.
 */
const fill = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const cued = (cue: string, tail: string) => (size: number) =>
  `${cue}${' '.repeat(size - cue.length - tail.length)}${tail}`;

/** Shapes for compromise, the name detector: one long word, punctuation only, numbers, short words. */
const NAME_SHAPES: Record<string, (size: number) => string> = {
  'letters and dots then @': (size) => `${fill('a.', size)}@`,
  'spaced digits': (size) => fill('1 ', size),
  dots: (size) => fill('.', size),
  'short capitalised words': (size) => fill('Aa ', size),
};

/** Shapes for the pattern detectors (and the name shapes, cheap for them). */
const PATTERN_SHAPES: Record<string, (size: number) => string> = {
  ...NAME_SHAPES,
  // Cue words followed by a run of spaces that optional parts of a pattern could share.
  'policy cue then spaces': cued('policy', 'ABCDEFGHIJ'),
  'claim cue then spaces': cued('claim number', 'x'),
  'SSN cue then spaces': cued('SSN', 'x'),
  'account cue then spaces': cued('account no.', 'x'),
  'routing cue then spaces': cued('routing number', 'x'),
  'sort code cue then spaces': cued('sort code', 'x'),
  // Digit runs and groups, IBAN-like starts, cues without values, half tokens.
  'long + numbers': (size) => fill(`+${'1'.repeat(40)} `, size),
  'spaced fours': (size) => fill('4 ', size),
  'IBAN starts': (size) => fill('GB82 ', size),
  'cue words': (size) => fill('policy claim DOB account phone ', size),
  'capitalised words after numbers': (size) => fill(`1 ${'Aaa '.repeat(10)}`, size),
  'half tokens': (size) => fill('[[PII:EMAIL:', size),
};

const KB = 1024;
/** Leeway for a measurement too short to scale (a collection, a timer tick). */
const FLOOR_MS = 40;
const ORDINARY = (size: number) => fill(`${corpusMessage(PII_CORPUS)} ${corpusMessage(NAME_CORPUS)} `, size);

/**
 * CPU milliseconds (this process's, so other processes on the machine do not count) to scan
 * `text`: the least of `runs` fresh detectors (no name cache; the least, as a collection may
 * fall in any one run).
 */
async function scanMs(categories: readonly PiiCategory[], text: string, runs: number): Promise<number> {
  let best = Infinity;
  for (let run = 0; run < runs; run++) {
    const detector = await createPiiDetector({
      categories,
      policyNumberPatterns: DEFAULT_POLICY_NUMBER_PATTERNS,
      claimNumberPatterns: DEFAULT_CLAIM_NUMBER_PATTERNS,
    });
    const started = process.cpuUsage();
    detector.detect(text);
    const used = process.cpuUsage(started);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

/** Each shape from `from` to 64 KB, doubling: at most 3x the time per doubling, and at 64 KB at most 4x ordinary text. */
async function expectLinear(
  categories: readonly PiiCategory[],
  shapes: Record<string, (size: number) => string>,
  from: number,
  runs: number,
): Promise<void> {
  const ordinary = await scanMs(categories, ORDINARY(64 * KB), runs);
  for (const [name, shape] of Object.entries(shapes)) {
    let previous = await scanMs(categories, shape(from), runs);
    for (let size = 2 * from; size <= 64 * KB; size *= 2) {
      const ms = await scanMs(categories, shape(size), runs);
      const why = `${name}: ${size / KB} KB took ${ms.toFixed(0)} ms, half as much ${previous.toFixed(0)} ms`;
      expect(ms, why).toBeLessThan(3 * previous + FLOOR_MS);
      previous = ms;
    }
    const why = `${name}: 64 KB took ${previous.toFixed(0)} ms, ordinary text ${ordinary.toFixed(0)} ms`;
    expect(previous, why).toBeLessThan(4 * ordinary + FLOOR_MS);
  }
}

describe('hostile input', () => {
  // From half a KB: a pattern that backtracks catastrophically fails at a small size, before it
  // hangs (the cue patterns' cubic cost took 5 s at 1 KB).
  it('costs the pattern detectors time linear in its length, about what ordinary text costs', async () => {
    await expectLinear(DEFAULT_PII_CATEGORIES, PATTERN_SHAPES, KB / 2, 3);
  });

  // compromise costs about 10 ms per 4 KB piece: only the doubling from 32 to 64 KB is timed.
  it('costs the name detector time linear in its length, about what ordinary text costs', async () => {
    await expectLinear(['person_name'], NAME_SHAPES, 32 * KB, 2);
  });
});
