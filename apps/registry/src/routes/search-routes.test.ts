import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistrySearchResult } from '@agent-platform/contracts';
import { seedVersions, seedYank, type SeedVersion } from '@agent-platform/registry-core/testing';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RegistryApp } from '../registry-app.ts';
import { buildRegistryTestApp } from '../testing/registry-test-app.ts';
import { searchRoutes } from './search-routes.ts';

let dir: string;
let store: Store;
let app: RegistryApp;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-registry-search-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  app = await buildRegistryTestApp({ store, plugins: [searchRoutes] });
});
afterEach(async () => {
  await app.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function search(query: string, on: RegistryApp = app): Promise<RegistrySearchResult> {
  const res = await on.inject({ method: 'GET', url: `/search${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const names = (result: RegistrySearchResult) => result.results.map((r) => r.name);

const RANKED: SeedVersion[] = [
  { name: 'policy-letters', version: '1.0.0', title: 'Policy letters', description: 'Writes letters about claims and policies.' },
  { name: 'loss-notes', version: '1.0.0', title: 'Loss notes', description: 'Keeps notes.', keywords: ['claims', 'notes'] },
  { name: 'fnol-router', version: '1.0.0', title: 'Claims router', description: 'Routes new reports.' },
  { name: 'claims-intake', version: '1.0.0', title: 'Intake', description: 'Takes reports.' },
  { name: 'claims', version: '1.0.0', title: 'Core', description: 'The core.' },
  { name: 'underwriting-desk', version: '1.0.0', title: 'Underwriting desk', description: 'Scores risks.' },
];

describe('GET /search ranking', () => {
  beforeEach(() => seedVersions(store, RANKED));

  it('ranks exact name > name word > title > keywords > description, and leaves out what does not match', async () => {
    const result = await search('?q=claims');
    expect(names(result)).toEqual(['claims', 'claims-intake', 'fnol-router', 'loss-notes', 'policy-letters']);
    expect(result.total).toBe(5);
    const scores = result.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(new Set(scores).size).toBe(5);
  });

  it('matches case-insensitively and by word prefix; every word must match', async () => {
    expect(names(await search('?q=CLAIM'))).toEqual(['claims', 'claims-intake', 'fnol-router', 'loss-notes', 'policy-letters']);
    expect(names(await search('?q=claims%20router'))).toEqual(['fnol-router']);
    expect(names(await search('?q=claims%20nothing-like-this'))).toEqual([]);
    expect(names(await search('?q=claims-intake'))).toEqual(['claims-intake']);
  });

  it('breaks ties by name', async () => {
    await seedVersions(store, [
      { name: 'zeta-tool', version: '1.0.0', title: 'Reserve tool', description: 'x' },
      { name: 'alpha-tool', version: '1.0.0', title: 'Reserve tool', description: 'x' },
      { name: 'mid-tool', version: '1.0.0', title: 'Reserve tool', description: 'x' },
    ]);
    const result = await search('?q=reserve');
    expect(names(result)).toEqual(['alpha-tool', 'mid-tool', 'zeta-tool']);
    expect(new Set(result.results.map((r) => r.score)).size).toBe(1);
  });

  it('lists everything by name for an empty or blank query, with the latest version and the package fields', async () => {
    const all = await search('');
    expect(names(all)).toEqual(['claims', 'claims-intake', 'fnol-router', 'loss-notes', 'policy-letters', 'underwriting-desk']);
    expect(names(await search('?q=%20%20'))).toEqual(names(all));
    expect(all.results[3]).toEqual({
      name: 'loss-notes',
      type: 'skill',
      title: 'Loss notes',
      description: 'Keeps notes.',
      latest: '1.0.0',
      keywords: ['claims', 'notes'],
      categories: [],
      regions: [],
      score: 0,
    });
  });
});

describe('GET /search filters', () => {
  beforeEach(() =>
    seedVersions(store, [
      { name: 'fnol-agent', version: '1.0.0', type: 'agent-template', categories: ['insurance/claims/fnol'], regions: ['GB'], keywords: ['FNOL', 'intake'] },
      { name: 'claims-skill', version: '1.0.0', type: 'skill', categories: ['insurance/claims'], regions: ['US', 'CA'], keywords: ['claims'] },
      { name: 'policy-skill', version: '1.0.0', type: 'skill', categories: ['insurance/policy'], regions: [], keywords: ['policy'] },
      { name: 'crm-connector', version: '1.0.0', type: 'integration', categories: ['integrations'], regions: ['DE'], keywords: ['crm', 'fnol-adjacent'] },
    ]),
  );

  it('type', async () => {
    expect(names(await search('?type=skill'))).toEqual(['claims-skill', 'policy-skill']);
    expect(names(await search('?type=integration'))).toEqual(['crm-connector']);
    const bad = await app.inject({ method: 'GET', url: '/search?type=tool' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.category).toBe('ValidationError');
  });

  it('category matches the path and its sub-paths, on path boundaries', async () => {
    expect(names(await search('?category=insurance'))).toEqual(['claims-skill', 'fnol-agent', 'policy-skill']);
    expect(names(await search('?category=insurance/claims'))).toEqual(['claims-skill', 'fnol-agent']);
    expect(names(await search('?category=insurance/claims/fnol'))).toEqual(['fnol-agent']);
    expect(names(await search('?category=insurance/claim'))).toEqual([]);
    expect(names(await search('?category=Insurance/Policy/'))).toEqual(['policy-skill']);
  });

  it('region matches that region and the packages for every region, case-insensitively; an unknown code is 400', async () => {
    expect(names(await search('?region=gb'))).toEqual(['fnol-agent', 'policy-skill']);
    expect(names(await search('?region=CA'))).toEqual(['claims-skill', 'policy-skill']);
    expect(names(await search('?region=fr'))).toEqual(['policy-skill']);
    const bad = await app.inject({ method: 'GET', url: '/search?region=zz' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      error: { category: 'ValidationError', message: "region 'zz' is not an ISO 3166-1 alpha-2 code (GET /regions lists them)", details: { field: 'region' } },
    });
  });

  it('keyword is an exact keyword, case-insensitive', async () => {
    expect(names(await search('?keyword=fnol'))).toEqual(['fnol-agent']);
    expect(names(await search('?keyword=FNOL'))).toEqual(['fnol-agent']);
    expect(names(await search('?keyword=fno'))).toEqual([]);
  });

  it('combines filters with each other and with the text', async () => {
    expect(names(await search('?type=skill&region=GB'))).toEqual(['policy-skill']);
    expect(names(await search('?q=claims&category=insurance&type=skill'))).toEqual(['claims-skill']);
    expect(names(await search('?q=fnol&region=DE'))).toEqual(['crm-connector']);
  });
});

describe('GET /search pagination', () => {
  beforeEach(() => seedVersions(store, Array.from({ length: 45 }, (_, i) => ({ name: `pkg-${String(i).padStart(2, '0')}`, version: '1.0.0', title: 'Thing' }))));

  it('pages 20 by default, per_page up to 100, with the total over every page', async () => {
    const first = await search('');
    expect(first).toMatchObject({ total: 45, page: 1, per_page: 20 });
    expect(names(first)).toEqual(Array.from({ length: 20 }, (_, i) => `pkg-${String(i).padStart(2, '0')}`));
    const third = await search('?q=thing&page=3&per_page=20');
    expect(third).toMatchObject({ total: 45, page: 3, per_page: 20 });
    expect(names(third)).toEqual(['pkg-40', 'pkg-41', 'pkg-42', 'pkg-43', 'pkg-44']);
    expect((await search('?page=4')).results).toEqual([]);
    expect((await search('?per_page=100')).results).toHaveLength(45);
  });

  it('refuses page 0, per_page 0 and per_page over 100', async () => {
    for (const query of ['?page=0', '?per_page=0', '?per_page=101', '?page=x']) {
      const res = await app.inject({ method: 'GET', url: `/search${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.category).toBe('ValidationError');
    }
  });
});

describe('GET /search and yanks', () => {
  it('shows the latest non-yanked version; a package whose versions are all yanked is not found until one is un-yanked', async () => {
    await seedVersions(store, [
      { name: 'rater', version: '1.0.0', title: 'Rater one' },
      { name: 'rater', version: '1.5.0', title: 'Rater one-five' },
      { name: 'rater', version: '2.0.0', title: 'Rater two', yanked: true },
      { name: 'rater', version: '3.0.0-beta.1', title: 'Rater beta' },
      { name: 'pulled', version: '1.0.0', title: 'Pulled rater', yanked: true },
      { name: 'early', version: '0.1.0-alpha.1', title: 'Early rater' },
    ]);
    const result = await search('?q=rater');
    expect(result.results.map((r) => [r.name, r.latest, r.title])).toEqual([
      ['rater', '1.5.0', 'Rater one-five'],
      ['early', '0.1.0-alpha.1', 'Early rater'],
    ]);
    await seedYank(store, 'rater', '1.5.0');
    expect((await search('?q=rater')).results.find((r) => r.name === 'rater')?.latest).toBe('1.0.0');
    await seedYank(store, 'pulled', '1.0.0', false);
    expect(names(await search('?q=pulled'))).toEqual(['pulled']);
  });
});

describe('GET /search across registry processes', () => {
  it('a second registry over the same store finds what was published after its first query', async () => {
    const other = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    const second = await buildRegistryTestApp({ store: other, plugins: [searchRoutes] });
    try {
      await seedVersions(store, [{ name: 'first-one', version: '1.0.0' }]);
      expect(names(await search('', second))).toEqual(['first-one']);
      await seedVersions(store, [{ name: 'second-one', version: '1.0.0' }]);
      expect(names(await search('', second))).toEqual(['first-one', 'second-one']);
    } finally {
      await second.close();
      await other.close();
    }
  });
});
