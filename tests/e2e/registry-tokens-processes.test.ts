import { openExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { callRegistry, startRegistryProcesses, type RegistryProcesses } from '../support/registry-processes.ts';

// Publishers' tokens across registry processes (docs/registry-auth.md "Tokens"): two `apps/registry`
// processes over one data dir in auth mode local. A token made on one works on the other; revoked
// on the other, it is refused by the first on its next request; revoking its maker's key stops it
// everywhere; a process SIGKILLed and started again still knows every token.

let cluster: RegistryProcesses | undefined;

afterAll(async () => {
  await cluster?.close();
});


const send = callRegistry;

describe('registry tokens across registry processes', () => {
  it('a token made on one process works on the other, and stops everywhere once revoked there', async () => {
    cluster = await startRegistryProcesses('ap-registry-tokens-processes-', { auth: { mode: 'local' } });
    const examples = await openExampleArchives();
    const [first, second] = await Promise.all([cluster.start('first'), cluster.start('second')]);

    const admin: string = (await send(first.url, 'POST', '/keys', undefined, { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
    const alice = (await send(second.url, 'POST', '/keys', admin, { json: { name: 'alice', role: 'publisher' } })).body;
    const made = await send(first.url, 'POST', '/tokens', alice.secret, { json: { name: 'ci', scopes: ['publish-new', 'publish-update'], packages: ['loss-*'] } });
    expect(made.status).toBe(201);
    const ci: string = made.body.secret;

    const published = await send(second.url, 'POST', '/packages', ci, { archive: await examples.build('loss-summary') });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect(published.body.published_by).toBe('key:alice');
    expect((await send(second.url, 'GET', '/tokens', alice.secret)).body.tokens.map((t: { id: string }) => t.id)).toEqual([made.body.id]);

    // The first process is SIGKILLed and started again: the token is in the store, not in a process.
    await first.app.kill();
    const again = await cluster.start('first-again');
    expect(await send(again.url, 'GET', '/auth/whoami', ci)).toMatchObject({ status: 200, body: { identity: 'key:alice', role: 'publisher' } });

    // Revoked on the second process: the restarted first refuses it on its next request.
    expect((await send(second.url, 'DELETE', `/tokens/${made.body.id}`, alice.secret)).body.revoked).toBe(true);
    expect((await send(again.url, 'POST', '/packages', ci, { archive: await examples.build('loss-summary', { version: '1.1.0' }) })).status).toBe(401);

    // A second token stops when its maker's key is revoked, on either process.
    const other: string = (await send(again.url, 'POST', '/tokens', alice.secret, { json: { name: 'ci-2', scopes: ['yank'] } })).body.secret;
    expect((await send(second.url, 'GET', '/auth/whoami', other)).status).toBe(200);
    expect((await send(again.url, 'DELETE', `/keys/${alice.id}`, admin)).status).toBe(200);
    expect((await send(second.url, 'GET', '/auth/whoami', other)).status).toBe(401);
    expect((await send(again.url, 'GET', '/auth/whoami', other)).status).toBe(401);
    await examples.close();
  }, 180_000);
});
