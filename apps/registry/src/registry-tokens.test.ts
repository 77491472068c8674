import { defaultConfig } from '@agent-platform/config';
import { openExampleArchives, registryCall, renamed, type ExampleArchives, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRegistry, type TestRegistry } from './testing/test-registry.ts';

// Publishers' own tokens over HTTP (docs/registry-auth.md "Tokens"), auth mode local with the real
// hook: made by a publisher's key, each acts as that publisher within its scopes, package patterns
// and expiry; listed and revoked by its maker; never able to widen itself; audited.

let registry: TestRegistry;
let examples: ExampleArchives;
let admin: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  examples = await openExampleArchives();
});
afterAll(async () => examples.close());
beforeEach(async () => {
  registry = await startTestRegistry({ realAuth: true, registry: { auth: { ...defaultConfig().registry.auth, mode: 'local' } } });
  admin = (await send('POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
  alice = (await send('POST', '/keys', { bearer: admin, json: { name: 'alice', role: 'publisher' } })).body.secret;
  bob = (await send('POST', '/keys', { bearer: admin, json: { name: 'bob', role: 'publisher' } })).body.secret;
});
afterEach(async () => registry.close());

function send(method: string, path: string, options: RegistryCallOptions = {}): Promise<RegistryAnswer> {
  return registryCall(registry.url, method, path, options);
}

/** examples/loss-summary under another name and version. */
async function archive(name: string, version = '1.0.0'): Promise<Uint8Array> {
  return renamed(await examples.build('loss-summary', { version }), name);
}

const token = async (bearer: string, body: Record<string, unknown>): Promise<{ id: string; secret: string }> => {
  const created = await send('POST', '/tokens', { bearer, json: { name: 'ci', ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
};

describe('registry tokens', () => {
  it('a token acts as its maker, only within its scopes and package patterns, with the refusal saying why', async () => {
    const created = await send('POST', '/tokens', { bearer: alice, json: { name: 'claims ci', scopes: ['publish-new', 'publish-update'], packages: ['claims-*'], expires_in: '30d' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'claims ci', identity: 'key:alice', scopes: ['publish-new', 'publish-update'], packages: ['claims-*'], revoked: false });
    expect(created.body.secret).toMatch(/^reg_pt_/);
    expect(created.body.expires_at).not.toBeNull();
    const ci = created.body.secret as string;

    // Published as alice: she owns what her token made.
    const published = await send('POST', '/packages', { bearer: ci, archive: await archive('claims-desk') });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect(published.body.published_by).toBe('key:alice');
    expect((await send('GET', '/packages/claims-desk')).body.owners).toEqual(['key:alice']);
    expect((await send('POST', '/packages', { bearer: ci, archive: await archive('claims-desk', '1.1.0') })).status).toBe(201);

    // Outside its patterns, and outside its scopes: 403, nothing changed.
    const outside = await send('POST', '/packages', { bearer: ci, archive: await archive('motor-desk') });
    expect(outside.status).toBe(403);
    expect(outside.body.error.message).toContain("limited to the packages claims-*; 'motor-desk' is not one of them");
    expect((await send('GET', '/packages/motor-desk')).status).toBe(404);
    const yank = await send('POST', '/packages/claims-desk/1.1.0/yank', { bearer: ci, json: { reason: 'bad rates' } });
    expect(yank.status).toBe(403);
    expect(yank.body.error.message).toContain("may not yank or un-yank versions (scope 'yank')");
    const owners = await send('PUT', '/packages/claims-desk/owners', { bearer: ci, json: { owners: ['key:bob'] } });
    expect(owners.status).toBe(403);
    expect((await send('GET', '/packages/claims-desk')).body).toMatchObject({ owners: ['key:alice'], latest: '1.1.0', deprecated: null });

    // Deprecation is package maintenance: publish-update allows it, a yank-only token does not.
    const yankOnly = await token(alice, { name: 'yanker', scopes: ['yank'] });
    expect((await send('PUT', '/packages/claims-desk/deprecation', { bearer: yankOnly.secret, json: { message: 'use claims-hub' } })).status).toBe(403);
    expect((await send('PUT', '/packages/claims-desk/deprecation', { bearer: ci, json: { message: 'use claims-hub' } })).body.deprecated).toMatchObject({ deprecated_by: 'key:alice' });

    // Scopes still sit on top of ownership: a token of bob's may not touch alice's package.
    const bobs = await token(bob, { scopes: ['publish-update', 'yank'] });
    expect((await send('POST', '/packages/claims-desk/1.1.0/yank', { bearer: bobs.secret, json: { reason: 'x' } })).status).toBe(403);
    // And an update-only token cannot claim a new name.
    const updateOnly = await token(alice, { scopes: ['publish-update'] });
    const fresh = await send('POST', '/packages', { bearer: updateOnly.secret, archive: await archive('claims-new') });
    expect(fresh.status).toBe(403);
    expect(fresh.body.error.message).toContain("may not publish a new package (scope 'publish-new')");
    // Collections are not in any scope.
    const collection = await fetch(`${registry.url}/collections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ci}`, 'content-type': 'application/toml' },
      body: 'name = "x"\n',
    });
    expect(collection.status).toBe(403);
    expect(((await collection.json()) as { error: { message: string } }).error.message).toContain('a registry token acts on packages only');
  });

  it('lists only its maker tokens without secrets; revocation is immediate; a token cannot make or revoke tokens', async () => {
    const first = await token(alice, { scopes: ['yank'] });
    const second = await token(alice, { name: 'release', scopes: ['publish-update'], packages: ['claims-desk', 'fnol-*'] });
    await token(bob, { scopes: ['yank'] });
    const listed = await send('GET', '/tokens', { bearer: alice });
    expect(listed.status).toBe(200);
    expect(listed.body.tokens.map((t: { id: string }) => t.id).sort()).toEqual([first.id, second.id].sort());
    expect(JSON.stringify(listed.body)).not.toContain(first.secret);
    expect(JSON.stringify(listed.body)).not.toContain('secret');

    // A token may not mint a wider token, nor revoke one.
    const wider = await send('POST', '/tokens', { bearer: first.secret, json: { name: 'wider', scopes: ['publish-new'] } });
    expect(wider.status).toBe(403);
    expect(wider.body.error.message).toContain('a registry token may not create tokens');
    expect((await send('DELETE', `/tokens/${second.id}`, { bearer: first.secret })).status).toBe(403);
    // Someone else's token is unknown to bob (404); an admin may revoke it.
    expect((await send('DELETE', `/tokens/${first.id}`, { bearer: bob })).status).toBe(404);
    expect(await send('GET', '/auth/whoami', { bearer: first.secret })).toMatchObject({ status: 200, body: { identity: 'key:alice', role: 'publisher' } });
    const revoked = await send('DELETE', `/tokens/${first.id}`, { bearer: admin });
    expect(revoked).toMatchObject({ status: 200, body: { id: first.id, revoked: true } });
    const refused = await send('GET', '/auth/whoami', { bearer: first.secret });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('invalid, revoked or expired registry token');
    expect((await send('DELETE', `/tokens/${second.id}`, { bearer: alice })).body.revoked).toBe(true);

    // Audited: who made and revoked which token, never a secret.
    const audit = (await registry.engines.store.log<{ action: string; identity: string; target: string }>('audit').list({ limit: 50 })).filter((e) => e.action.startsWith('registry.token.'));
    expect(audit.map((e) => [e.action, e.identity, e.target])).toEqual(
      expect.arrayContaining([
        ['registry.token.created', 'key:alice', first.id],
        ['registry.token.revoked', 'key:admin', first.id],
        ['registry.token.revoked', 'key:alice', second.id],
      ]),
    );
    expect(JSON.stringify(audit)).not.toContain(first.secret);
  });

  it('stops with its maker key, and refuses bad input with a clear 400 that creates nothing', async () => {
    const ci = await token(alice, { scopes: ['publish-new'] });
    expect((await send('GET', '/auth/whoami', { bearer: ci.secret })).status).toBe(200);
    const aliceKey = (await send('GET', '/keys', { bearer: admin })).body.keys.find((k: { name: string }) => k.name === 'alice');
    expect((await send('DELETE', `/keys/${aliceKey.id}`, { bearer: admin })).status).toBe(200);
    expect((await send('GET', '/auth/whoami', { bearer: ci.secret })).status).toBe(401);

    for (const body of [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['admin'] },
      { name: 'x', scopes: ['yank', 'yank'] },
      { name: 'x', scopes: ['yank'], packages: ['*'] },
      { name: 'x', scopes: ['yank'], packages: ['claims-*-desk'] },
      { name: 'x', scopes: ['yank'], packages: ['Bad Name'] },
      { name: 'x', scopes: ['yank'], expires_in: 'soon' },
      { name: 'x', scopes: ['yank'], extra: true },
    ]) {
      const answer = await send('POST', '/tokens', { bearer: bob, json: body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.category).toBe('ValidationError');
    }
    expect((await send('GET', '/tokens', { bearer: bob })).body.tokens).toEqual([]);
    // A reader may not make tokens at all.
    const reader = (await send('POST', '/keys', { bearer: admin, json: { name: 'viewer', role: 'reader' } })).body.secret;
    expect((await send('POST', '/tokens', { bearer: reader, json: { name: 'x', scopes: ['yank'] } })).status).toBe(403);
  });

  it('writes no audit entry while [audit] enabled = false, and does again once it is true', async () => {
    const tokenEntries = async () =>
      (await registry.engines.store.log<{ action: string; target: string }>('audit').list({ limit: 100 })).filter((e) => e.action.startsWith('registry.token.'));
    // The registry reads the setting per request (a config reload changes it).
    registry.config.audit = { ...registry.config.audit, enabled: false };
    const quiet = await token(alice, { scopes: ['yank'] });
    expect((await send('DELETE', `/tokens/${quiet.id}`, { bearer: alice })).status).toBe(200);
    expect(await tokenEntries()).toEqual([]);
    registry.config.audit = { ...registry.config.audit, enabled: true };
    const heard = await token(alice, { scopes: ['yank'] });
    expect((await tokenEntries()).map((e) => [e.action, e.target])).toEqual([['registry.token.created', heard.id]]);
  });
});
