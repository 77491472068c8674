import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { INSURANCE_TAXONOMY } from './insurance-taxonomy.ts';
import { BUILT_IN_TAXONOMY, createTaxonomy, unknownCategories } from './taxonomy.ts';

describe('taxonomy', () => {
  it('lists the insurance paths with titles and descriptions, sorted by path, plus general shelves', () => {
    const paths = BUILT_IN_TAXONOMY.categories.map((c) => c.path);
    expect(paths).toEqual([...paths].sort());
    for (const path of ['insurance', 'insurance/claims', 'insurance/claims/fnol', 'insurance/underwriting', 'insurance/policy', 'insurance/billing', 'insurance/fraud', 'insurance/customer-service', 'insurance/compliance', 'insurance/distribution', 'integrations', 'data'])
      expect(paths).toContain(path);
    for (const category of BUILT_IN_TAXONOMY.categories) {
      expect(category.title.trim()).not.toBe('');
      expect(category.description.trim()).not.toBe('');
    }
  });

  it('has a version that is the same for the same content, whatever the order, and changes with any change', () => {
    const again = createTaxonomy([...INSURANCE_TAXONOMY].reverse());
    expect(again.version).toBe(BUILT_IN_TAXONOMY.version);
    expect(BUILT_IN_TAXONOMY.version).toMatch(/^sha256:[0-9a-f]{16}$/);
    const added = createTaxonomy([...INSURANCE_TAXONOMY, { path: 'insurance/claims/litigation', title: 'Litigation', description: 'Claims in court.' }]);
    const retitled = createTaxonomy(INSURANCE_TAXONOMY.map((c) => (c.path === 'insurance/fraud' ? { ...c, title: 'Fraud detection' } : c)));
    const removed = createTaxonomy(INSURANCE_TAXONOMY.filter((c) => c.path !== 'insurance/billing'));
    const versions = new Set([BUILT_IN_TAXONOMY.version, added.version, retitled.version, removed.version]);
    expect(versions.size).toBe(4);
  });

  it('refuses a list with a missing parent, a repeated path or a malformed path', () => {
    expect(() => createTaxonomy([{ path: 'insurance/claims', title: 'Claims', description: 'x' }])).toThrow("has no parent 'insurance'");
    expect(() => createTaxonomy([{ path: 'data', title: 'a', description: 'x' }, { path: 'data', title: 'b', description: 'y' }])).toThrow('listed twice');
    expect(() => createTaxonomy([{ path: 'Data/', title: 'a', description: 'x' }])).toThrow('not lower-case words');
  });

  it('names the unknown categories of a list, once each, and keeps the ones the examples use valid', () => {
    expect(unknownCategories(['insurance/claims', 'insurance/policy'])).toEqual([]);
    expect(unknownCategories(['insurance/claims', 'insurance/pets', 'Insurance/Claims', 'insurance/pets', 'insurance/'])).toEqual([
      'insurance/pets',
      'Insurance/Claims',
      'insurance/',
    ]);
    const small = createTaxonomy([{ path: 'data', title: 'Data', description: 'x' }]);
    expect(unknownCategories(['data', 'insurance'], small)).toEqual(['insurance']);
  });

  it('is exactly the table of docs/registry-search.md "Taxonomy"', async () => {
    const doc = await readFile(new URL('../../../../docs/registry-search.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z0-9/-]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => ({ path: m[1], title: m[2]!.trim(), description: m[3]!.trim() }));
    expect(rows).toEqual([...INSURANCE_TAXONOMY]);
  });
});
