import { describe, expect, it } from 'vitest';
import { seedRecord, type SeedVersion } from '../testing/seed-registry.ts';
import { PackageIndex, type SearchRequest } from './package-index.ts';
import { searchEntry, words, type SearchEntry } from './search-entry.ts';

const WORDS = ['claims', 'claim', 'claimant', 'fnol', 'router', 'notes', 'loss', 'motor', 'home', 'fraud', 'fraudulent', 'desk'];
const TYPES = ['skill', 'competency', 'agent-template'] as const;
const CATEGORIES = ['insurance/claims', 'insurance/claims/fnol', 'insurance/fraud', 'data/extraction'];

/** A small deterministic generator, so a failure names the seed that found it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function entry(next: () => number, name: string): SearchEntry {
  const pick = <T,>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const seed: SeedVersion = {
    name,
    version: `1.${Math.floor(next() * 5)}.0`,
    type: pick(TYPES),
    title: `${pick(WORDS)} ${pick(WORDS)}`,
    description: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`,
    keywords: next() < 0.5 ? [pick(WORDS)] : [],
    categories: next() < 0.7 ? [pick(CATEGORIES)] : [],
    dependencies: Object.fromEntries(Array.from({ length: Math.floor(next() * 3) }, () => [`pkg-${Math.floor(next() * 12)}`, `^1.${Math.floor(next() * 3)}.0`])),
  };
  return searchEntry(seedRecord(seed));
}

const REQUESTS: SearchRequest[] = [
  ...['', 'claim', 'claims router', 'fraud', 'pkg-1', 'pkg-12', 'desk notes', 'zzz'].map((q) => ({
    text: q === '' ? null : { whole: q, words: words(q) },
    filter: {},
    page: 1,
    perPage: 100,
  })),
  { text: null, filter: { type: 'skill' }, page: 1, perPage: 100 },
  { text: null, filter: { category: 'insurance/claims' }, page: 1, perPage: 100 },
  { text: { whole: 'claim', words: ['claim'] }, filter: { type: 'competency' }, page: 1, perPage: 100 },
  { text: null, filter: { keyword: 'fnol' }, page: 2, perPage: 3 },
];

describe('package index', () => {
  it('changed in place, answers every query (and every reverse dependency) as an index built from scratch over the same packages', () => {
    for (const seed of [1, 2, 3, 42, 2026]) {
      const next = random(seed);
      const live = new Map<string, SearchEntry>();
      for (let i = 0; i < 20; i++) live.set(`pkg-${i}`, entry(next, `pkg-${i}`));
      const index = new PackageIndex([...live.values()]);
      for (let step = 0; step < 200; step++) {
        const name = `pkg-${Math.floor(next() * 40)}`;
        const roll = next();
        // A new version (or a new package), every version yanked, or a package listed again.
        const changed = roll < 0.25 ? null : entry(next, name);
        if (changed === null) live.delete(name);
        else live.set(name, changed);
        index.put(name, changed);
        if (step % 20 !== 19) continue;
        const fresh = new PackageIndex([...live.values()]);
        expect(index.size, `seed ${seed} step ${step}`).toBe(live.size);
        for (const request of REQUESTS) {
          expect(index.search(request), `seed ${seed} step ${step} ${JSON.stringify(request)}`).toEqual(fresh.search(request));
        }
        for (let dependency = 0; dependency < 12; dependency++) {
          expect(index.dependentsOf(`pkg-${dependency}`), `seed ${seed} step ${step} dependents of pkg-${dependency}`).toEqual(fresh.dependentsOf(`pkg-${dependency}`));
        }
      }
    }
  });

  it('takes out a package whose versions are all yanked and gives it back, found by its words', () => {
    const next = random(7);
    const index = new PackageIndex([entry(next, 'alpha'), entry(next, 'beta')]);
    const listed = () => index.search({ text: null, filter: {}, page: 1, perPage: 10 }).results.map((r) => r.name);
    index.put('alpha', null);
    expect(listed()).toEqual(['beta']);
    expect(index.search({ text: { whole: 'alpha', words: ['alpha'] }, filter: {}, page: 1, perPage: 10 }).total).toBe(0);
    index.put('alpha', entry(next, 'alpha'));
    index.put('aardvark', entry(next, 'aardvark'));
    expect(listed()).toEqual(['aardvark', 'alpha', 'beta']);
    expect(index.search({ text: { whole: 'alpha', words: ['alpha'] }, filter: {}, page: 1, perPage: 10 }).results.map((r) => r.name)).toEqual(['alpha']);
    index.put('never-published', null);
    expect(index.size).toBe(3);
  });
});
