import { describe, expect, it } from 'vitest';
import { seedRecord } from '../testing/seed-registry.ts';
import { searchEntry, words } from './search-entry.ts';
import { WEIGHTS } from './search-ranking.ts';
import { TextIndex } from './text-index.ts';

const entries = [
  { name: 'claims-desk', version: '1.0.0', title: 'Claimant letters', description: 'Writes to claimants.', keywords: ['claims'] },
  { name: 'fnol-router', version: '1.0.0', title: 'Claims router', description: 'Routes claims.' },
  { name: 'loss-notes', version: '1.0.0', title: 'Loss notes', description: 'Notes.' },
].map((seed) => searchEntry(seedRecord(seed)));
const index = TextIndex.build(entries);
const query = (q: string) => ({ whole: q, words: words(q) });
const scores = (q: string) => {
  const match = index.match(query(q));
  return Object.fromEntries(match.positions.map((p) => [entries[p]!.name, match.scoreOf(p)]));
};

describe('text index', () => {
  it('adds, per query word, the weight of every field one of whose words starts with it', () => {
    expect(scores('claim')).toEqual({
      'claims-desk': WEIGHTS.name + WEIGHTS.title + WEIGHTS.keywords + WEIGHTS.description,
      'fnol-router': WEIGHTS.title + WEIGHTS.description,
    });
    // claims: title and description; router: name and title (`routes` does not start with `router`).
    expect(scores('claims router')).toEqual({ 'fnol-router': WEIGHTS.title + WEIGHTS.description + WEIGHTS.name + WEIGHTS.title });
    expect(scores('laim')).toEqual({});
  });

  it('adds the exact-name bonus only for the whole name', () => {
    // claims: name and keywords (`claimant` does not start with `claims`); desk: name.
    const words = 2 * WEIGHTS.name + WEIGHTS.keywords;
    expect(scores('claims-desk')['claims-desk']).toBe(WEIGHTS.exactName + words);
    expect(scores('claims desk')['claims-desk']).toBe(words);
    expect(scores('claims-des')['claims-desk']).toBeLessThan(WEIGHTS.exactName);
  });

  it('gives the same answer whatever was asked before (its buffers are reused)', () => {
    const first = scores('claims');
    scores('claims router');
    scores('notes');
    scores('nothing');
    expect(scores('claims')).toEqual(first);
  });
});
