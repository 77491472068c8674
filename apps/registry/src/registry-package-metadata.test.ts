import { systemClock } from '@agent-platform/domain';
import { createRegistryKeyService } from '@agent-platform/registry-core';
import { openExampleArchives, type ExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRegistry, TEST_IDENTITY_HEADER, TEST_ROLE_HEADER, type TestRegistry } from './testing/test-registry.ts';

// Download counts, deprecation, dist-tags, kept metadata and reverse dependencies over HTTP (docs/registry.md).
const ALICE = { [TEST_IDENTITY_HEADER]: 'key:alice', [TEST_ROLE_HEADER]: 'publisher' };
const BOB = { [TEST_IDENTITY_HEADER]: 'key:bob', [TEST_ROLE_HEADER]: 'publisher' };

let examples: ExampleArchives;
let registry: TestRegistry;
beforeAll(async () => {
  examples = await openExampleArchives();
});
afterAll(async () => examples.close());
beforeEach(async () => {
  registry = await startTestRegistry();
  await createRegistryKeyService({ store: registry.deps.store, clock: systemClock }).create({ name: 'bob', role: 'publisher' });
  for (const version of ['1.0.0', '1.1.0']) {
    const published = await fetch(`${registry.url}/packages`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip', ...ALICE },
      body: await examples.build('loss-summary', { version }),
    });
    expect(published.status).toBe(201);
  }
});
afterEach(async () => registry.close());

const get = (path: string) => fetch(`${registry.url}${path}`);
const sendJson = (method: string, path: string, body: unknown, headers: Record<string, string> = ALICE) =>
  fetch(`${registry.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? null : JSON.stringify(body) });

describe('registry downloads', () => {
  it('counts each download per version and per day; a failed download counts nothing', async () => {
    for (const version of ['1.0.0', '1.0.0', '1.1.0']) expect((await get(`/packages/loss-summary/${version}/download`)).status).toBe(200);
    expect((await get('/packages/loss-summary/9.9.9/download')).status).toBe(404);
    // A day past the 90 kept is not listed (its counter also expires).
    await registry.deps.store.counters.add('registry:downloads:day:loss-summary:2020-01-01:1.0.0', 5);
    const today = new Date().toISOString().slice(0, 10);
    expect(await (await get('/packages/loss-summary/downloads')).json()).toEqual({
      name: 'loss-summary',
      total: 3,
      versions: [
        { version: '1.1.0', downloads: 1 },
        { version: '1.0.0', downloads: 2 },
      ],
      days: [{ date: today, downloads: 3 }],
    });
    const unknown = await get('/packages/nothing-here/downloads');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { category: string } }).error.category).toBe('NotFound');
  });
});

describe('registry deprecation', () => {
  it('an owner deprecates with a message: the package says so, every version still downloads, the history records it', async () => {
    const deprecated = await sendJson('PUT', '/packages/loss-summary/deprecation', { message: 'Use loss-digest: it covers marine claims — and more.' });
    expect(deprecated.status).toBe(200);
    expect(await deprecated.json()).toMatchObject({ deprecated: { message: 'Use loss-digest: it covers marine claims — and more.', deprecated_by: 'key:alice' } });
    expect(await (await get('/packages/loss-summary')).json()).toMatchObject({ deprecated: { message: 'Use loss-digest: it covers marine claims — and more.' }, latest: '1.1.0' });
    const download = await get('/packages/loss-summary/1.0.0/download');
    expect(download.status).toBe(200);
    expect(decodeURIComponent(download.headers.get('x-registry-deprecated') ?? '')).toBe('Use loss-digest: it covers marine claims — and more.');

    // Not bob's to change; nothing changes on a refusal or on bad input.
    expect((await sendJson('DELETE', '/packages/loss-summary/deprecation', undefined, BOB)).status).toBe(403);
    for (const body of [{ message: '' }, { message: '   ' }, { message: 'x'.repeat(501) }, {}, { message: 'ok', extra: 1 }]) {
      const answer = await sendJson('PUT', '/packages/loss-summary/deprecation', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    expect((await sendJson('PUT', '/packages/no-such-package/deprecation', { message: 'gone' })).status).toBe(404);
    expect(((await (await get('/packages/loss-summary')).json()) as { deprecated: { message: string } }).deprecated.message).toContain('loss-digest');

    const lifted = await sendJson('DELETE', '/packages/loss-summary/deprecation', undefined);
    expect(await lifted.json()).toMatchObject({ deprecated: null });
    expect((await get('/packages/loss-summary/1.0.0/download')).headers.get('x-registry-deprecated')).toBeNull();
    const history = (await (await get('/packages/loss-summary/history')).json()) as { entries: Array<{ action: string; reason: string | null }> };
    expect(history.entries.map((e) => e.action)).toEqual(['publish', 'publish', 'deprecate', 'undeprecate']);
    expect(history.entries[2]?.reason).toContain('loss-digest');
  });
});

describe('registry dist-tags', () => {
  it('points a tag at a version, moves and removes it; latest is computed and cannot be set', async () => {
    const tagged = await sendJson('PUT', '/packages/loss-summary/dist-tags/next', { version: '1.1.0' });
    expect(tagged.status).toBe(200);
    expect(((await tagged.json()) as { dist_tags: Record<string, string> }).dist_tags).toEqual({ latest: '1.1.0', next: '1.1.0' });
    await sendJson('PUT', '/packages/loss-summary/dist-tags/next', { version: '1.0.0' });
    expect(((await (await get('/packages/loss-summary')).json()) as { dist_tags: Record<string, string> }).dist_tags).toEqual({ latest: '1.1.0', next: '1.0.0' });

    // Refusals change nothing: latest, a bad tag, an unknown or yanked version, another identity.
    expect((await sendJson('PUT', '/packages/loss-summary/dist-tags/latest', { version: '1.0.0' })).status).toBe(400);
    expect((await sendJson('PUT', '/packages/loss-summary/dist-tags/Next%20One', { version: '1.0.0' })).status).toBe(400);
    expect((await sendJson('PUT', '/packages/loss-summary/dist-tags/beta', { version: '9.0.0' })).status).toBe(404);
    expect((await sendJson('PUT', '/packages/loss-summary/dist-tags/beta', { version: 'one' })).status).toBe(400);
    expect((await sendJson('PUT', '/packages/loss-summary/dist-tags/beta', { version: '1.0.0' }, BOB)).status).toBe(403);
    expect((await sendJson('POST', '/packages/loss-summary/1.0.0/yank', { reason: 'bad rates' })).status).toBe(200);
    const yanked = await sendJson('PUT', '/packages/loss-summary/dist-tags/beta', { version: '1.0.0' });
    expect(yanked.status).toBe(409);
    expect(((await yanked.json()) as { error: { message: string } }).error.message).toContain('is yanked');
    // A yank leaves an existing tag where it was.
    expect(((await (await get('/packages/loss-summary')).json()) as { dist_tags: Record<string, string> }).dist_tags).toEqual({ latest: '1.1.0', next: '1.0.0' });

    const removed = await sendJson('DELETE', '/packages/loss-summary/dist-tags/next', undefined);
    expect(((await removed.json()) as { dist_tags: Record<string, string> }).dist_tags).toEqual({ latest: '1.1.0' });
    expect((await sendJson('DELETE', '/packages/loss-summary/dist-tags/next', undefined)).status).toBe(404);
    const history = (await (await get('/packages/loss-summary/history')).json()) as { entries: Array<{ action: string; tag?: string; version: string | null }> };
    expect(history.entries.filter((e) => e.action === 'tag' || e.action === 'untag').map((e) => [e.action, e.tag, e.version])).toEqual([
      ['tag', 'next', '1.1.0'],
      ['tag', 'next', '1.0.0'],
      ['untag', 'next', null],
    ]);
  });
});

describe('registry package metadata and reverse dependencies', () => {
  it('keeps repository and homepage of the manifest, and shows licence, repository and homepage on the package', async () => {
    const archive = await examples.build('loss-summary', {
      version: '1.2.0',
      edit: (manifest) =>
        manifest.replace('[package.metadata]\n', '[package.metadata]\nrepository = "https://git.example/claims/loss-summary"\nhomepage = "https://claims.example/loss-summary"\n'),
    });
    const published = await fetch(`${registry.url}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip', ...ALICE }, body: archive });
    expect(await published.json()).toMatchObject({ repository: 'https://git.example/claims/loss-summary', homepage: 'https://claims.example/loss-summary' });
    expect(await (await get('/packages/loss-summary')).json()).toMatchObject({
      license: 'Apache-2.0',
      repository: 'https://git.example/claims/loss-summary',
      homepage: 'https://claims.example/loss-summary',
    });
    // A version without them shows none.
    expect(await (await get('/packages/loss-summary/1.0.0')).json()).not.toHaveProperty('repository');
  });

  it('lists the packages whose latest listed version depends on a package, following publishes and yanks', async () => {
    const publish = async (name: string) =>
      (await fetch(`${registry.url}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip', ...ALICE }, body: await examples.build(name) })).status;
    expect(await (await get('/packages/loss-summary/dependents')).json()).toEqual({ name: 'loss-summary', dependents: [] });
    expect(await publish('fnol-triage')).toBe(201);
    expect(await publish('claims-intake')).toBe(201);
    expect(await (await get('/packages/loss-summary/dependents')).json()).toEqual({
      name: 'loss-summary',
      dependents: [{ name: 'fnol-triage', version: '1.0.0', requirement: '^1.0.0' }],
    });
    expect(((await (await get('/packages/fnol-triage/dependents')).json()) as { dependents: Array<{ name: string }> }).dependents.map((d) => d.name)).toEqual(['claims-intake']);
    // Its only version yanked, fnol-triage depends on nothing any more.
    expect((await sendJson('POST', '/packages/fnol-triage/1.0.0/yank', { reason: 'superseded' })).status).toBe(200);
    expect(((await (await get('/packages/loss-summary/dependents')).json()) as { dependents: unknown[] }).dependents).toEqual([]);
    expect((await get('/packages/nothing-here/dependents')).status).toBe(404);
    expect((await get('/packages/Bad%20Name/dependents')).status).toBe(400);
  });
});
