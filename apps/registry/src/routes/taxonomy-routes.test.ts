import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Taxonomy } from '@agent-platform/contracts';
import { ISO_REGION_CODES } from '@agent-platform/packages';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryApp } from '../registry-app.ts';
import { buildRegistryTestApp } from '../testing/registry-test-app.ts';
import { taxonomyRoutes } from './taxonomy-routes.ts';

let dir: string;
let store: Store;
let app: RegistryApp;
let url: string;

// Over a real listener: these are the routes a publisher's tooling fetches first.
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-registry-taxonomy-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  app = await buildRegistryTestApp({ store, plugins: [taxonomyRoutes] });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('taxonomy and regions routes', () => {
  it('GET /taxonomy lists the categories with titles and descriptions, and its version matches GET /taxonomy/version', async () => {
    const taxonomy = (await (await fetch(`${url}/taxonomy`)).json()) as Taxonomy;
    const paths: string[] = taxonomy.categories.map((c) => c.path);
    expect(paths).toEqual(expect.arrayContaining(['insurance', 'insurance/claims', 'insurance/claims/fnol', 'insurance/policy', 'integrations', 'data']));
    expect(taxonomy.categories.find((c) => c.path === 'insurance/claims')).toEqual({
      path: 'insurance/claims',
      title: 'Claims',
      description: 'Handling a loss from first notice to settlement and recovery.',
    });
    const version = await fetch(`${url}/taxonomy/version`);
    expect(version.status).toBe(200);
    expect(await version.json()).toEqual({ version: taxonomy.version });
  });

  it('GET /regions lists all 249 ISO 3166-1 alpha-2 codes by code, with English names', async () => {
    const res = await fetch(`${url}/regions`);
    expect(res.status).toBe(200);
    const { regions } = (await res.json()) as { regions: { code: string; name: string }[] };
    expect(regions).toHaveLength(249);
    expect(regions.map((r) => r.code)).toEqual([...ISO_REGION_CODES].sort());
    expect(regions[0]).toEqual({ code: 'AD', name: 'Andorra' });
    expect(regions.find((r) => r.code === 'US')).toEqual({ code: 'US', name: 'United States' });
    expect(regions.at(-1)).toEqual({ code: 'ZW', name: 'Zimbabwe' });
  });

  it('answers without any identity while the registry requires one', async () => {
    const locked = await buildRegistryTestApp({ store, plugins: [taxonomyRoutes], authMode: 'local' });
    try {
      for (const path of ['/taxonomy', '/taxonomy/version', '/regions']) expect((await locked.inject({ method: 'GET', url: path })).statusCode, path).toBe(200);
    } finally {
      await locked.close();
    }
  });
});
