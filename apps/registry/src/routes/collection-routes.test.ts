import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock } from '@agent-platform/domain';
import { seedVersions } from '@agent-platform/registry-core/testing';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RegistryApp } from '../registry-app.ts';
import { buildRegistryTestApp } from '../testing/registry-test-app.ts';
import { TEST_IDENTITY_HEADER, TEST_ROLE_HEADER } from '../testing/test-registry.ts';
import { collectionRoutes } from './collection-routes.ts';

let dir: string;
let store: Store;
let app: RegistryApp;
const clock = fixedClock('2026-03-01T10:00:00.000Z');

const ALICE = 'alice:publisher';
const BOB = 'bob:publisher';
const ADMIN = 'root:registry-admin';
/** The test headers naming `<identity>:<role>` as the caller. */
const as = (caller: string) => {
  const [identity = '', role = ''] = caller.split(':');
  return { [TEST_IDENTITY_HEADER]: identity, [TEST_ROLE_HEADER]: role };
};

// claims-intake -> claims-handling ^1.0.0 -> claims-model ~1.1.0: the closure is all three.
beforeEach(async () => {
  clock.set('2026-03-01T10:00:00.000Z');
  dir = await mkdtemp(join(tmpdir(), 'ap-registry-collections-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  app = await buildRegistryTestApp({ store, plugins: [collectionRoutes], clock });
  await seedVersions(store, [
    { name: 'claims-intake', version: '1.0.0', type: 'agent-template', dependencies: { 'claims-handling': '^1.0.0' } },
    { name: 'claims-handling', version: '1.2.0', type: 'competency', dependencies: { 'claims-model': '~1.1.0' } },
    { name: 'claims-model', version: '1.0.0', type: 'contract' },
    { name: 'claims-model', version: '1.1.3', type: 'contract' },
    { name: 'pulled-skill', version: '1.0.0', type: 'skill', yanked: true },
  ]);
});
afterEach(async () => {
  await app.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

interface Entry {
  name: string;
  version: string;
  type: string;
  dep?: boolean;
}
const FULL: Entry[] = [
  { name: 'claims-intake', version: '1.0.0', type: 'agent-template' },
  { name: 'claims-handling', version: '1.2.0', type: 'competency', dep: true },
  { name: 'claims-model', version: '1.1.3', type: 'contract', dep: true },
];

function toml(options: { name?: string; version?: string; entries?: Entry[]; extra?: string } = {}): string {
  const entries = (options.entries ?? FULL)
    .map((e) => `[[packages]]\nname = "${e.name}"\nversion = "${e.version}"\npackage_type = "${e.type}"\nis_dependency = ${e.dep === true}\n`)
    .join('\n');
  return `name = "${options.name ?? 'claims-starter'}"
display_name = "Claims starter"
description = "Everything to take a first notice of loss."
version = "${options.version ?? '1.0.0'}"
license = "Apache-2.0"
tags = ["claims"]
${options.extra ?? ''}
[metadata]
categories = ["insurance/claims"]
regions = ["gb"]

${entries}`;
}

function send(method: 'POST' | 'PUT', url: string, body: string, caller = ALICE, contentType = 'application/toml') {
  return app.inject({ method, url, payload: body, headers: { 'content-type': contentType, ...as(caller) } });
}
const publish = (body: string, caller = ALICE, contentType?: string) => send('POST', '/collections', body, caller, contentType);
const list = async () => (await app.inject({ method: 'GET', url: '/collections' })).json().collections.map((c: { name: string; version: string }) => `${c.name}@${c.version}`);

describe('POST /collections', () => {
  it('publishes a collection holding its whole closure; the publisher owns it; GET shows it', async () => {
    const res = await publish(toml({ extra: '[author]\nname = "Claims team"\nemail = "claims@example.com"\n' }));
    expect(res.statusCode, res.body).toBe(201);
    const expected = {
      name: 'claims-starter',
      display_name: 'Claims starter',
      description: 'Everything to take a first notice of loss.',
      version: '1.0.0',
      license: 'Apache-2.0',
      featured: false,
      tags: ['claims'],
      author: { name: 'Claims team', email: 'claims@example.com' },
      metadata: { categories: ['insurance/claims'], regions: ['GB'] },
      packages: FULL.map((e) => ({ name: e.name, version: e.version, package_type: e.type, is_dependency: e.dep === true })),
      owners: ['alice'],
      created_at: '2026-03-01T10:00:00.000Z',
      updated_at: '2026-03-01T10:00:00.000Z',
    };
    expect(res.json()).toEqual(expected);
    const got = await app.inject({ method: 'GET', url: '/collections/claims-starter' });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(expected);
  });

  it('accepts text/plain and a charset parameter', async () => {
    expect((await publish(toml({ name: 'plain-one' }), ALICE, 'text/plain')).statusCode).toBe(201);
    expect((await publish(toml({ name: 'charset-one' }), ALICE, 'application/toml; charset=utf-8')).statusCode).toBe(201);
    expect(await list()).toEqual(['charset-one@1.0.0', 'plain-one@1.0.0']);
  });

  it('refuses a collection missing a transitive dependency, naming it and who needs it; nothing is stored', async () => {
    const res = await publish(toml({ entries: FULL.slice(0, 2) }));
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.category).toBe('ValidationError');
    expect(error.details.problems).toEqual([
      {
        file: 'COLLECTION.toml',
        field: 'packages[1].name',
        rule: 'missing-dependency',
        message: "'claims-handling' depends on 'claims-model' (~1.1.0), which the collection does not list",
      },
    ]);
    expect(error.message).toContain("'claims-handling' depends on 'claims-model'");
    expect(await list()).toEqual([]);
  });

  it('refuses a listed dependency at a version its constraint refuses', async () => {
    const res = await publish(toml({ entries: [FULL[0]!, FULL[1]!, { name: 'claims-model', version: '1.0.0', type: 'contract', dep: true }] }));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.problems).toEqual([
      expect.objectContaining({ rule: 'dependency-version', message: "'claims-handling' needs 'claims-model' ~1.1.0; the collection lists 1.0.0" }),
    ]);
  });

  it('refuses unpublished, yanked and mistyped entries, naming each', async () => {
    const res = await publish(
      toml({
        entries: [
          ...FULL.slice(1),
          { name: 'claims-intake', version: '9.9.9', type: 'agent-template' },
          { name: 'pulled-skill', version: '1.0.0', type: 'skill' },
          { name: 'ghost-package', version: '1.0.0', type: 'skill' },
        ],
      }).replace('package_type = "contract"', 'package_type = "skill"'),
    );
    expect(res.statusCode).toBe(400);
    const problems = res.json().error.details.problems.map((p: { field: string; rule: string; message: string }) => [p.field, p.rule, p.message]);
    expect(problems).toEqual([
      ['packages[2].version', 'unpublished-package', "'claims-intake@9.9.9' is not published in this registry"],
      ['packages[3].version', 'yanked-package', "'pulled-skill@1.0.0' is yanked: seeded yank"],
      ['packages[4].version', 'unpublished-package', "'ghost-package@1.0.0' is not published in this registry"],
      ['packages[1].package_type', 'package-type-mismatch', "'claims-model' is a contract package"],
    ]);
    expect(await list()).toEqual([]);
  });

  it('refuses invalid TOML, invalid fields and unknown categories with every problem', async () => {
    const broken = await publish('name = "claims-starter"\nversion = ');
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error.details.problems).toEqual([expect.objectContaining({ file: 'COLLECTION.toml', field: '(file)', rule: 'toml-syntax' })]);

    const fields = await publish(toml({ version: 'one' }).replace('license = "Apache-2.0"\n', ''));
    expect(fields.statusCode).toBe(400);
    expect(fields.json().error.details.problems.map((p: { field: string; rule: string }) => `${p.field}:${p.rule}`)).toEqual(
      expect.arrayContaining(['version:semver', 'license:required']),
    );

    const category = await publish(toml().replace('categories = ["insurance/claims"]', 'categories = ["insurance/claims", "insurance/pets"]'));
    expect(category.statusCode).toBe(400);
    expect(category.json().error.details.problems).toEqual([
      { file: 'COLLECTION.toml', field: 'metadata.categories[1]', rule: 'unknown-category', message: "'insurance/pets' is not in the registry's taxonomy (GET /taxonomy)" },
    ]);
    expect(await list()).toEqual([]);
  });

  it('answers 415 for a body that is not TOML, and for a body without a content type', async () => {
    const json = await publish(JSON.stringify({ name: 'claims-starter' }), ALICE, 'application/json');
    expect(json.statusCode).toBe(415);
    expect(json.json().error).toEqual({ category: 'UnsupportedMediaType', message: "unsupported content type 'application/json': send application/toml" });
    const none = await app.inject({ method: 'POST', url: '/collections', payload: toml(), headers: as(ALICE) });
    expect(none.statusCode).toBe(415);
    expect(await list()).toEqual([]);
  });

  it('answers 409 for a name already published, leaving the first one as it was', async () => {
    expect((await publish(toml())).statusCode).toBe(201);
    const again = await publish(toml({ version: '2.0.0' }), BOB);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ category: 'Conflict', message: expect.stringContaining("collection 'claims-starter' already exists") });
    const kept = (await app.inject({ method: 'GET', url: '/collections/claims-starter' })).json();
    expect(kept).toMatchObject({ version: '1.0.0', owners: ['alice'] });
  });
});

describe('GET /collections', () => {
  it('lists every collection by name; an unknown name is 404', async () => {
    expect(await list()).toEqual([]);
    await publish(toml({ name: 'zz-claims' }));
    await publish(toml({ name: 'aa-claims' }));
    expect(await list()).toEqual(['aa-claims@1.0.0', 'zz-claims@1.0.0']);
    const missing = await app.inject({ method: 'GET', url: '/collections/nope-nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toEqual({ category: 'NotFound', message: "collection 'nope-nope' not found", details: { kind: 'collection', id: 'nope-nope' } });
  });
});

describe('PUT /collections/{name}', () => {
  beforeEach(async () => {
    expect((await publish(toml())).statusCode).toBe(201);
    clock.advance(60_000);
  });

  it('replaces the collection by a higher version, keeping its owners and creation time', async () => {
    const res = await send('PUT', '/collections/claims-starter', toml({ version: '1.1.0' }).replace('tags = ["claims"]', 'tags = ["claims", "fnol"]'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ version: '1.1.0', tags: ['claims', 'fnol'], owners: ['alice'], created_at: '2026-03-01T10:00:00.000Z', updated_at: '2026-03-01T10:01:00.000Z' });
    expect(await list()).toEqual(['claims-starter@1.1.0']);
  });

  it('refuses the same or a lower version, another name, and a broken closure, changing nothing', async () => {
    for (const [body, rule] of [
      [toml({ version: '1.0.0' }), 'collection-version'],
      [toml({ version: '0.9.0' }), 'collection-version'],
      [toml({ version: '2.0.0', name: 'other-name' }), 'collection-name'],
      [toml({ version: '2.0.0', entries: FULL.slice(0, 1) }), 'missing-dependency'],
    ] as const) {
      const res = await send('PUT', '/collections/claims-starter', body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json().error.details.problems[0].rule).toBe(rule);
    }
    expect((await send('PUT', '/collections/claims-starter', toml({ version: '1.0.0' }))).json().error.details.problems[0].message).toBe(
      'must be higher than the published 1.0.0 (got 1.0.0)',
    );
    expect(await list()).toEqual(['claims-starter@1.0.0']);
  });

  it('is 404 for an unknown collection and 415 for a body that is not TOML', async () => {
    expect((await send('PUT', '/collections/not-there', toml({ name: 'not-there', version: '2.0.0' }))).statusCode).toBe(404);
    expect((await send('PUT', '/collections/claims-starter', '{}', ALICE, 'application/json')).statusCode).toBe(415);
  });
});

describe('DELETE /collections/{name}', () => {
  it('deletes it (204); then it is gone (404), and deleting again is 404', async () => {
    await publish(toml());
    const res = await app.inject({ method: 'DELETE', url: '/collections/claims-starter', headers: as(ALICE) });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await app.inject({ method: 'GET', url: '/collections/claims-starter' })).statusCode).toBe(404);
    expect(await list()).toEqual([]);
    expect((await app.inject({ method: 'DELETE', url: '/collections/claims-starter', headers: as(ALICE) })).statusCode).toBe(404);
  });
});

describe('collection ownership', () => {
  it('lets only the owners or a registry-admin replace or delete a collection (403 otherwise)', async () => {
    await publish(toml());
    const put = await send('PUT', '/collections/claims-starter', toml({ version: '2.0.0' }), BOB);
    expect(put.statusCode).toBe(403);
    expect(put.json().error).toEqual({
      category: 'PermissionDenied',
      message: "'bob' is not an owner of collection 'claims-starter' (owners and registry-admin may change it)",
      details: { kind: 'collection', id: 'claims-starter' },
    });
    const del = await app.inject({ method: 'DELETE', url: '/collections/claims-starter', headers: as(BOB) });
    expect(del.statusCode).toBe(403);
    expect(await list()).toEqual(['claims-starter@1.0.0']);

    // 403 comes before the body is judged: bob learns nothing about what his body would do.
    expect((await send('PUT', '/collections/claims-starter', 'not toml', BOB)).statusCode).toBe(403);

    const byAdmin = await send('PUT', '/collections/claims-starter', toml({ version: '2.0.0' }), ADMIN);
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json().owners).toEqual(['alice']);
    expect((await send('PUT', '/collections/claims-starter', toml({ version: '3.0.0' }), ALICE)).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: '/collections/claims-starter', headers: as(ALICE) })).statusCode).toBe(204);
  });
});
