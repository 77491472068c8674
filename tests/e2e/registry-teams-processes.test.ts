import { openExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { callRegistry, startRegistryProcesses, type RegistryProcesses } from '../support/registry-processes.ts';

// Teams and two-sided ownership across registry processes (docs/registry.md "Teams",
// "Ownership"): two `apps/registry` processes over one data dir in auth mode local. Invitations
// made on one are accepted on the other; a process SIGKILLed mid-way and started again still knows
// every team, member and pending invitation; a member removed on one process is refused by the
// other on its very next request; a team deleted on one is gone on the other.

let cluster: RegistryProcesses | undefined;

afterAll(async () => {
  await cluster?.close();
});


const send = callRegistry;

describe('registry teams across registry processes', () => {
  it('shares teams and invitations through the store, survives a SIGKILL, and a removal on one process refuses at once on the other', async () => {
    cluster = await startRegistryProcesses('ap-registry-teams-processes-', { auth: { mode: 'local' } });
    const examples = await openExampleArchives();
    const [first, second] = await Promise.all([cluster.start('first'), cluster.start('second')]);

    const admin: string = (await send(first.url, 'POST', '/keys', undefined, { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
    const key = async (name: string): Promise<string> => (await send(second.url, 'POST', '/keys', admin, { json: { name, role: 'publisher' } })).body.secret;
    const [alice, bob, carol] = [await key('alice'), await key('bob'), await key('carol')];
    expect((await send(first.url, 'POST', '/packages', alice, { archive: await examples.build('loss-summary') })).status).toBe(201);

    // Team made on one process, invitation accepted on the other; the package offered on one, accepted on the other.
    expect((await send(second.url, 'POST', '/teams', alice, { json: { name: 'claims-team' } })).status).toBe(201);
    expect((await send(first.url, 'POST', '/teams/claims-team/invitations', alice, { json: { identity: 'key:bob' } })).status).toBe(200);
    expect((await send(second.url, 'POST', '/teams/claims-team/invitations/accept', bob)).status).toBe(200);
    expect((await send(first.url, 'PUT', '/packages/loss-summary/owners', alice, { json: { owners: ['key:alice', 'team:claims-team', 'key:carol'] } })).status).toBe(200);
    expect((await send(second.url, 'POST', '/packages/loss-summary/owners/accept', alice, { json: { owner: 'team:claims-team' } })).body.owners).toEqual([
      'key:alice',
      'team:claims-team',
    ]);
    expect((await send(first.url, 'POST', '/packages/loss-summary/1.0.0/yank', bob, { json: { reason: 'wrong rates' } })).status).toBe(200);

    // The first process is SIGKILLed mid-way (carol's invitation still pending) and started again.
    await first.app.kill();
    const again = await cluster.start('first-again');
    const team = (await send(again.url, 'GET', '/teams/claims-team')).body;
    expect(team.members.map((m: { identity: string; role: string }) => [m.identity, m.role])).toEqual([
      ['key:alice', 'owner'],
      ['key:bob', 'member'],
    ]);
    expect((await send(again.url, 'GET', '/packages/loss-summary/owners', alice)).body).toMatchObject({
      owners: ['key:alice', 'team:claims-team'],
      pending_owners: [{ owner: 'key:carol', invited_by: 'key:alice' }],
    });
    expect((await send(again.url, 'POST', '/packages/loss-summary/owners/accept', carol, { json: {} })).body.owners).toContain('key:carol');
    expect((await send(again.url, 'POST', '/packages/loss-summary/1.0.0/yank', bob, { json: { reason: 'rates fixed', yanked: false } })).status).toBe(200);

    // Bob is removed on the second process: the restarted first refuses him on his next request.
    expect((await send(second.url, 'DELETE', '/teams/claims-team/members/key%3Abob', alice)).status).toBe(200);
    const refused = await send(again.url, 'POST', '/packages/loss-summary/1.0.0/yank', bob, { json: { reason: 'again' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("'key:bob' may not yank versions of 'loss-summary'");
    expect((await send(again.url, 'POST', '/packages', bob, { archive: await examples.build('loss-summary', { version: '1.1.0' }) })).status).toBe(403);
    expect((await send(second.url, 'GET', '/teams', bob)).body.teams).toEqual([]);

    // A team made on one process and deleted on the other is gone on both; its name stays taken.
    expect((await send(again.url, 'POST', '/teams', carol, { json: { name: 'spare-team' } })).status).toBe(201);
    expect((await send(second.url, 'DELETE', '/teams/claims-team', alice)).status).toBe(409);
    expect((await send(second.url, 'DELETE', '/teams/spare-team', carol)).status).toBe(200);
    expect((await send(again.url, 'GET', '/teams/spare-team')).status).toBe(404);
    expect((await send(again.url, 'POST', '/teams', bob, { json: { name: 'spare-team' } })).status).toBe(409);
    await examples.close();
  }, 180_000);
});
