import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSigner } from '@agent-platform/registry-core';
import { openExampleArchives, type ExampleArchives } from '@agent-platform/registry-core/testing';
import { freePort } from '@agent-platform/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Install by name (DECISIONS D5, docs/catalog.md "Install by name") from a real registry: the
// all-in-one serves its own registry (`[surfaces] registry = true`) and installs from it over
// HTTP, verifying every archive's signature against `[catalog] trusted_keys` before anything is
// written. The fake-registry tests (apps/api catalog-registry.test.ts) cover forged answers; these
// cover what the real registry serves.
describe('installing by name from the registry', () => {
  let examples: ExampleArchives;
  let dir: string;
  let api: PlatformTestApi | null = null;
  beforeAll(async () => {
    examples = await openExampleArchives();
  });
  afterAll(async () => examples.close());
  afterEach(async () => {
    await api?.close();
    api = null;
    await rm(dir, { recursive: true, force: true });
  });

  /** A platform serving a registry whose signing key is made here, trusting `trusted` (default: that key). */
  async function start(trusted?: string): Promise<{ api: PlatformTestApi; registry: string; admin: string }> {
    dir = await mkdtemp(join(tmpdir(), 'ap-install-by-name-'));
    const { privateKey } = generateKeyPairSync('ed25519');
    const keyFile = join(dir, 'registry-signing-key.pem');
    await writeFile(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const registry = `http://127.0.0.1:${await freePort()}`;
    api = await startPlatformTestApi({
      listen: true,
      config: {
        surfaces: { registry: true },
        registry: { listen: registry.slice('http://'.length), signing_key_file: keyFile },
        catalog: { registry_url: registry, trusted_keys: [trusted ?? createSigner(privateKey).publicKey.public_key] },
      },
    });
    for (const name of ['loss-summary', 'fnol-triage', 'claims-intake']) {
      const published = await fetch(`${registry}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip' }, body: await examples.build(name) });
      expect(published.status, await published.clone().text()).toBe(201);
    }
    return { api, registry, admin: await api.issueKey('admin') };
  }

  it('installs an agent with its dependencies, each verified, and lists them as from the registry', async () => {
    const { api, admin } = await start();
    const search = await api.request('GET', '/catalog/search?q=claims', { token: admin });
    expect(search.status).toBe(200);
    expect(search.body.results.map((r: { name: string }) => r.name)).toContain('claims-intake');

    const installed = await api.request('POST', '/catalog/install', { token: admin, body: { name: 'claims-intake', version: '^1.0.0', activate: true } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    expect(installed.body.installed.map((i: { name: string; status: string }) => `${i.name}:${i.status}`)).toEqual([
      'loss-summary:installed',
      'fnol-triage:installed',
      'claims-intake:installed',
    ]);
    const list = await api.request('GET', '/catalog/installed', { token: admin });
    expect(list.body.packages.map((p: { name: string; source: string }) => `${p.name}:${p.source}`)).toEqual([
      'claims-intake:registry',
      'fnol-triage:registry',
      'loss-summary:registry',
    ]);
    const agents = await api.request('GET', '/agents', { token: admin });
    expect(agents.body.agents).toEqual([expect.objectContaining({ name: 'claims-intake', state: 'Running' })]);
  });

  it('installs by dist-tag, and says so when a package it installs is deprecated', async () => {
    const { api, registry, admin } = await start();
    const rc = await fetch(`${registry}/packages`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip' },
      body: await examples.build('claims-intake', { version: '1.1.0-rc.1' }),
    });
    expect(rc.status, await rc.clone().text()).toBe(201);
    const change = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${registry}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    await change('PUT', '/packages/claims-intake/dist-tags/next', { version: '1.1.0-rc.1' });
    await change('PUT', '/packages/loss-summary/deprecation', { message: 'use loss-digest' });
    const install = (body: Record<string, unknown>) => api.request('POST', '/catalog/install', { token: admin, body });
    const shown = (items: Array<{ name: string; version: string; status: string; deprecated?: string }>) =>
      items.map((i) => `${i.status} ${i.name} ${i.version}${i.deprecated === undefined ? '' : ` (deprecated: ${i.deprecated})`}`);

    // `latest` is the highest listed version; a deprecated dependency installs and the answer says so.
    const chain = await install({ name: 'claims-intake', version: 'latest' });
    expect(chain.status, JSON.stringify(chain.body)).toBe(201);
    expect(shown(chain.body.installed)).toEqual([
      'installed loss-summary 1.0.0 (deprecated: use loss-digest)',
      'installed fnol-triage 1.0.0',
      'installed claims-intake 1.0.0',
    ]);

    // `*` never picks a pre-release; the tag names one.
    const tagged = await install({ name: 'claims-intake', version: 'next' });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(201);
    expect(shown(tagged.body.installed)).toEqual(['upgraded claims-intake 1.1.0-rc.1']);

    const unknownTag = await install({ name: 'fnol-triage', version: 'beta' });
    expect(unknownTag.status).toBe(404);
    expect(unknownTag.body.error).toMatchObject({ category: 'NotFound', details: { kind: 'dist-tag', id: 'fnol-triage@beta', tags: ['latest'] } });
    const notATag = await install({ name: 'fnol-triage', version: 'Next!' });
    expect(notATag.status).toBe(400);
    expect(notATag.body.error.message).toMatch(/neither a semver constraint .* nor a dist-tag/);
    expect((await api.request('GET', '/catalog/installed', { token: admin })).body.packages.map((p: { name: string; version: string }) => `${p.name} ${p.version}`)).toEqual([
      'claims-intake 1.1.0-rc.1',
      'fnol-triage 1.0.0',
      'loss-summary 1.0.0',
    ]);
  });

  it('installs nothing when the registry signature is not by a trusted key', async () => {
    const stranger = createSigner(generateKeyPairSync('ed25519').privateKey).publicKey.public_key;
    const { api, admin } = await start(stranger);
    const refused = await api.request('POST', '/catalog/install', { token: admin, body: { name: 'claims-intake' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.category).toBe('CatalogError');
    expect(refused.body.error.message).toMatch(/trusted/);
    expect((await api.request('GET', '/catalog/installed', { token: admin })).body.packages).toEqual([]);
  });

  it('installs nothing when an archive was changed in the registry storage', async () => {
    const { api, admin } = await start();
    const archives = join(api.dataDir, 'data', 'registry', 'archives', 'loss-summary');
    const [file] = await readdir(archives);
    await writeFile(join(archives, file!), Buffer.from('tampered bytes in storage'));
    const refused = await api.request('POST', '/catalog/install', { token: admin, body: { name: 'claims-intake' } });
    // The registry refuses to serve bytes whose digest is not the published one (its 500 is the
    // platform's 502, registry error), and nothing is installed.
    expect(refused.status, JSON.stringify(refused.body)).toBe(502);
    expect(refused.body.error.message).toMatch(/does not match its recorded sha256/);
    expect((await api.request('GET', '/catalog/installed', { token: admin })).body.packages).toEqual([]);
    expect((await api.request('GET', '/agents', { token: admin })).body.agents).toEqual([]);
  });
});
