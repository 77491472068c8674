import { ISO_REGION_CODES } from '@agent-platform/packages';
import { latestListed, unknownCategories } from '@agent-platform/registry-core';
import { seedRecord, type SeedVersion } from '@agent-platform/registry-core/testing';
import { describe, expect, it } from 'vitest';
import { registrySearchCorpus } from './registry-search.ts';

describe('registry search bench corpus', () => {
  it('is 10,000 distinct, publishable packages with taxonomy categories and ISO regions, the same every run', () => {
    const corpus = registrySearchCorpus(10_000);
    const byName = new Map<string, SeedVersion[]>();
    for (const seed of corpus) byName.set(seed.name, [...(byName.get(seed.name) ?? []), seed]);
    expect(byName.size).toBe(10_000);
    for (const seed of corpus) seedRecord(seed); // throws on anything that is not a RegistryVersion
    expect(unknownCategories(corpus.flatMap((s) => s.categories ?? []))).toEqual([]);
    expect(corpus.flatMap((s) => s.regions ?? []).every((r) => ISO_REGION_CODES.has(r))).toBe(true);
    expect(new Set(corpus.map((s) => s.type)).size).toBe(6);
    // Every package stays findable (its oldest version is never yanked), and some show an older version.
    const latest = [...byName.values()].map((versions) => latestListed(versions.map((v) => ({ version: v.version, yanked: v.yanked === true }))));
    expect(latest.every((v) => v !== null)).toBe(true);
    expect(corpus.some((s) => s.yanked === true)).toBe(true);
    expect(registrySearchCorpus(50)).toEqual(registrySearchCorpus(50));
  });
});
