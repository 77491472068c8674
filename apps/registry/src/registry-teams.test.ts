import { defaultConfig } from '@agent-platform/config';
import { openExampleArchives, registryCall, type ExampleArchives, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRegistry, type TestRegistry } from './testing/test-registry.ts';

// Teams and two-sided ownership transfers over HTTP (docs/registry.md "Teams" and "Ownership"),
// auth mode local with the real hook: members join only by accepting, a removed member loses its
// rights on its next request, a new package owner joins only by accepting, and a registry admin's
// owner list applies at once.

let registry: TestRegistry;
let examples: ExampleArchives;
let admin: string;
let alice: string;
let bob: string;
let carol: string;

beforeAll(async () => {
  examples = await openExampleArchives();
});
afterAll(async () => examples.close());
beforeEach(async () => {
  registry = await startTestRegistry({ realAuth: true, registry: { auth: { ...defaultConfig().registry.auth, mode: 'local' } } });
  admin = (await send('POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
  alice = (await send('POST', '/keys', { bearer: admin, json: { name: 'alice', role: 'publisher' } })).body.secret;
  bob = (await send('POST', '/keys', { bearer: admin, json: { name: 'bob', role: 'publisher' } })).body.secret;
  carol = (await send('POST', '/keys', { bearer: admin, json: { name: 'carol', role: 'publisher' } })).body.secret;
});
afterEach(async () => registry.close());

function send(method: string, path: string, options: RegistryCallOptions = {}): Promise<RegistryAnswer> {
  return registryCall(registry.url, method, path, options);
}

async function publish(bearer: string, version = '1.0.0'): Promise<RegistryAnswer> {
  return send('POST', '/packages', { bearer, archive: await examples.build('loss-summary', { version }) });
}

const members = (answer: RegistryAnswer) => answer.body.members.map((m: { identity: string; role: string }) => `${m.identity}=${m.role}`);

describe('registry teams', () => {
  it('makes a team whose members join only by accepting; owners manage it; bad input is refused and changes nothing', async () => {
    const made = await send('POST', '/teams', { bearer: alice, json: { name: 'claims-team' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ name: 'claims-team', created_by: 'key:alice', invitations: [] });
    expect(members(made)).toEqual(['key:alice=owner']);
    expect((await send('POST', '/teams', { bearer: bob, json: { name: 'claims-team' } })).status).toBe(409);
    expect((await send('POST', '/teams', { bearer: bob, json: { name: 'Bad Team' } })).body.error).toMatchObject({ category: 'ValidationError' });

    // Only a team owner invites, and only an identity the registry knows.
    const byOutsider = await send('POST', '/teams/claims-team/invitations', { bearer: carol, json: { identity: 'key:carol' } });
    expect(byOutsider.status).toBe(403);
    expect(byOutsider.body.error.message).toContain("only its owners (key:alice) and registry admins may");
    for (const identity of ['key:ghost', 'bob', 'team:claims-team']) {
      const refused = await send('POST', '/teams/claims-team/invitations', { bearer: alice, json: { identity } });
      expect(refused.status, identity).toBe(400);
      expect(refused.body.error.message).toContain(`identity '${identity}'`);
    }
    expect((await send('POST', '/teams/no-such-team/invitations', { bearer: alice, json: { identity: 'key:bob' } })).status).toBe(404);
    const invited = await send('POST', '/teams/claims-team/invitations', { bearer: alice, json: { identity: 'key:bob' } });
    expect(invited.status).toBe(200);
    expect(invited.body.invitations).toMatchObject([{ identity: 'key:bob', role: 'member', invited_by: 'key:alice' }]);
    expect(members(invited)).toEqual(['key:alice=owner']);
    // Who is invited shows to the team, the invitee and admins; anyone else sees the members only.
    for (const viewer of [alice, bob, admin]) expect((await send('GET', '/teams/claims-team', { bearer: viewer })).body.invitations).toHaveLength(1);
    for (const viewer of [carol, undefined]) {
      const seen = await send('GET', '/teams/claims-team', viewer === undefined ? {} : { bearer: viewer });
      expect(seen.status).toBe(200);
      expect(members(seen)).toEqual(['key:alice=owner']);
      expect(seen.body.invitations).toEqual([]);
    }

    // Nobody accepts for bob: carol has no invitation (404), and a token of bob's may not change teams.
    const notCarols = await send('POST', '/teams/claims-team/invitations/accept', { bearer: carol });
    expect(notCarols.status).toBe(404);
    expect(notCarols.body.error.message).toContain("'key:carol' has no invitation to team 'claims-team'");
    const bobsToken = (await send('POST', '/tokens', { bearer: bob, json: { name: 'ci', scopes: ['change-owners'] } })).body.secret;
    expect((await send('POST', '/teams/claims-team/invitations/accept', { bearer: bobsToken })).status).toBe(403);
    // Invited, bob sees the team in his list; carol sees none; the admin sees every team.
    expect((await send('GET', '/teams', { bearer: bob })).body.teams.map((t: { name: string }) => t.name)).toEqual(['claims-team']);
    expect((await send('GET', '/teams', { bearer: carol })).body.teams).toEqual([]);
    const accepted = await send('POST', '/teams/claims-team/invitations/accept', { bearer: bob });
    expect(accepted.status).toBe(200);
    expect(members(accepted)).toEqual(['key:alice=owner', 'key:bob=member']);
    expect(accepted.body.invitations).toEqual([]);
    expect((await send('POST', '/teams/claims-team/invitations', { bearer: alice, json: { identity: 'key:bob', role: 'member' } })).status).toBe(409);

    // The last owner can neither leave nor be demoted; once bob is an owner too, alice may leave.
    expect((await send('DELETE', '/teams/claims-team/members/key%3Aalice', { bearer: alice })).body.error).toMatchObject({ category: 'Conflict' });
    expect((await send('POST', '/teams/claims-team/invitations', { bearer: admin, json: { identity: 'key:alice', role: 'member' } })).status).toBe(409);
    expect((await send('DELETE', '/teams/claims-team/members/key%3Aalice', { bearer: bob })).status).toBe(403);
    expect(members(await send('POST', '/teams/claims-team/invitations', { bearer: alice, json: { identity: 'key:bob', role: 'owner' } }))).toEqual(['key:alice=owner', 'key:bob=owner']);
    const left = await send('DELETE', '/teams/claims-team/members/key%3Aalice', { bearer: alice });
    expect(members(left)).toEqual(['key:bob=owner']);
    expect((await send('DELETE', '/teams/claims-team/members/key%3Aalice', { bearer: bob })).status).toBe(404);
    expect(members(await send('GET', '/teams/claims-team'))).toEqual(['key:bob=owner']);
    expect((await send('GET', '/teams', { bearer: admin })).body.teams).toHaveLength(1);

    // Audited under `access`, the team as target.
    const audit = (await registry.engines.store.log<{ action: string; identity: string; target: string }>('audit').list({ limit: 100 })).filter((e) => e.action.startsWith('registry.team.'));
    expect(audit.map((e) => [e.action, e.identity, e.target]).reverse()).toEqual([
      ['registry.team.created', 'key:alice', 'team:claims-team'],
      ['registry.team.invited', 'key:alice', 'team:claims-team'],
      ['registry.team.joined', 'key:bob', 'team:claims-team'],
      ['registry.team.invited', 'key:alice', 'team:claims-team'],
      ['registry.team.member_removed', 'key:alice', 'team:claims-team'],
    ]);
  });

  it('a team owns a package once one of its owners accepts; every member acts on it, and a removed member is refused at once', async () => {
    expect((await publish(alice)).status).toBe(201);
    await send('POST', '/teams', { bearer: carol, json: { name: 'claims-team' } });
    await send('POST', '/teams/claims-team/invitations', { bearer: carol, json: { identity: 'key:bob' } });
    await send('POST', '/teams/claims-team/invitations/accept', { bearer: bob });

    const invited = await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'team:claims-team'] } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    expect(invited.body).toMatchObject({ owners: ['key:alice'], pending_owners: [{ owner: 'team:claims-team', invited_by: 'key:alice' }] });
    expect((await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'team:nobody'] } })).status).toBe(400);
    // Pending is not owning; a plain member cannot accept for the team, its owner can.
    expect((await publish(bob, '1.1.0')).status).toBe(403);
    // The team's invitation is seen by the team's owner (who accepts for it), not by a plain member.
    expect((await send('GET', '/packages/loss-summary/owners', { bearer: carol })).body.pending_owners.map((p: { owner: string }) => p.owner)).toEqual(['team:claims-team']);
    expect((await send('GET', '/packages/loss-summary/owners', { bearer: bob })).body.pending_owners).toEqual([]);
    const byMember = await send('POST', '/packages/loss-summary/owners/accept', { bearer: bob, json: { owner: 'team:claims-team' } });
    expect(byMember.status).toBe(403);
    expect(byMember.body.error.message).toContain("only an owner of team 'claims-team' accepts package ownership for it");
    const accepted = await send('POST', '/packages/loss-summary/owners/accept', { bearer: carol, json: { owner: 'team:claims-team' } });
    expect(accepted.body).toMatchObject({ owners: ['key:alice', 'team:claims-team'], pending_owners: [] });

    // Once the team owns it, every member sees the package's invitations, as an owner does.
    await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'team:claims-team', 'key:carol'] } });
    expect((await send('GET', '/packages/loss-summary/owners', { bearer: bob })).body.pending_owners.map((p: { owner: string }) => p.owner)).toEqual(['key:carol']);
    await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'team:claims-team'] } });
    // Bob, a member, publishes and yanks as an owner would.
    expect((await publish(bob, '1.1.0')).body.published_by).toBe('key:bob');
    expect((await send('POST', '/packages/loss-summary/1.1.0/yank', { bearer: bob, json: { reason: 'wrong rates' } })).status).toBe(200);
    // Removed from the team, he is refused on his very next request.
    expect((await send('DELETE', '/teams/claims-team/members/key%3Abob', { bearer: carol })).status).toBe(200);
    const refused = await send('POST', '/packages/loss-summary/1.1.0/yank', { bearer: bob, json: { reason: 'undo', yanked: false } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("belongs to key:alice, team:claims-team");
    expect((await publish(bob, '1.2.0')).status).toBe(403);
    expect((await send('GET', '/packages/loss-summary')).body.versions).toEqual(['1.1.0', '1.0.0']);
  });

  it('deletes a team no package names (team owners, admins), audited; refused with the packages while one does', async () => {
    expect((await publish(alice)).status).toBe(201);
    await send('POST', '/teams', { bearer: carol, json: { name: 'claims-team' } });
    await send('POST', '/teams/claims-team/invitations', { bearer: carol, json: { identity: 'key:bob' } });
    await send('POST', '/teams/claims-team/invitations/accept', { bearer: bob });
    await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'team:claims-team'] } });

    expect((await send('DELETE', '/teams/claims-team', { bearer: bob })).status).toBe(403);
    const named = await send('DELETE', '/teams/claims-team', { bearer: carol });
    expect(named.status).toBe(409);
    expect(named.body.error.message).toContain("team 'claims-team' still owns or is invited to own 1 package (loss-summary): remove team:claims-team from their owners first");
    expect((await send('GET', '/teams/claims-team', { bearer: bob })).status).toBe(200);
    // The invitation withdrawn, the team goes; then it is gone for every route, and its name stays taken.
    expect((await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice'] } })).status).toBe(200);
    const deleted = await send('DELETE', '/teams/claims-team', { bearer: carol });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toEqual({ name: 'claims-team', deleted_at: expect.any(String), deleted_by: 'key:carol' });
    expect((await send('GET', '/teams/claims-team', { bearer: admin })).status).toBe(404);
    expect((await send('GET', '/teams', { bearer: bob })).body.teams).toEqual([]);
    expect((await send('DELETE', '/teams/claims-team', { bearer: carol })).status).toBe(404);
    expect((await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'team:claims-team'] } })).status).toBe(400);
    const again = await send('POST', '/teams', { bearer: bob, json: { name: 'claims-team' } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('was deleted');
    expect((await send('DELETE', '/teams/Not_A_Name', { bearer: carol })).status).toBe(400);
    const audit = (await registry.engines.store.log<{ action: string; identity: string; target: string }>('audit').list({ limit: 100 })).filter((e) => e.action === 'registry.team.deleted');
    expect(audit.map((e) => [e.identity, e.target])).toEqual([['key:carol', 'team:claims-team']]);
  });
});

describe('two-sided ownership transfers', () => {
  it('an owner removes at once but only invites; the invitee alone accepts; an admin sets owners at once', async () => {
    expect((await publish(alice)).status).toBe(201);
    // Handing over in one step would leave no accepted owner: 409, nothing changed.
    const alone = await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:bob'] } });
    expect(alone.status).toBe(409);
    expect(alone.body.error.message).toContain('would be left without an owner');
    const invited = await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:alice', 'key:bob'] } });
    expect(invited.body).toMatchObject({ owners: ['key:alice'], pending_owners: [{ owner: 'key:bob', invited_by: 'key:alice' }] });
    expect((await publish(bob, '1.1.0')).status).toBe(403);

    // Who was invited is seen by the owners, the invitee (its own) and admins, not by the public page.
    expect((await send('GET', '/packages/loss-summary')).body).not.toHaveProperty('pending_owners');
    expect((await send('GET', '/packages/loss-summary', { bearer: alice })).body).not.toHaveProperty('pending_owners');
    const ownersOf = async (bearer?: string) => send('GET', '/packages/loss-summary/owners', bearer === undefined ? {} : { bearer });
    expect((await ownersOf(alice)).body).toEqual({ name: 'loss-summary', owners: ['key:alice'], pending_owners: [{ owner: 'key:bob', invited_by: 'key:alice', invited_at: expect.any(String) }] });
    expect((await ownersOf(admin)).body.pending_owners).toHaveLength(1);
    expect((await ownersOf(bob)).body.pending_owners.map((p: { owner: string }) => p.owner)).toEqual(['key:bob']);
    expect((await ownersOf(carol)).body).toEqual({ name: 'loss-summary', owners: ['key:alice'], pending_owners: [] });
    expect((await ownersOf()).status).toBe(401);
    expect((await send('GET', '/packages/no-such-package/owners', { bearer: carol })).status).toBe(404);

    // Nobody accepts for bob: carol has no invitation, and may not take bob's; an admin neither.
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: carol, json: {} })).status).toBe(404);
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: carol, json: { owner: 'key:bob' } })).status).toBe(403);
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: admin, json: { owner: 'key:bob' } })).status).toBe(403);
    // A token of bob's accepts only with change-owners for this package.
    const yankOnly = (await send('POST', '/tokens', { bearer: bob, json: { name: 'y', scopes: ['yank'] } })).body.secret;
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: yankOnly, json: {} })).status).toBe(403);
    const owners = (await send('POST', '/tokens', { bearer: bob, json: { name: 'o', scopes: ['change-owners'], packages: ['loss-*'] } })).body.secret;
    const accepted = await send('POST', '/packages/loss-summary/owners/accept', { bearer: owners, json: {} });
    expect(accepted.body).toMatchObject({ owners: ['key:alice', 'key:bob'], pending_owners: [] });
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: bob, json: {} })).status).toBe(404);

    // Now alice may leave; a pending invitation the list leaves out is withdrawn.
    await send('PUT', '/packages/loss-summary/owners', { bearer: bob, json: { owners: ['key:alice', 'key:bob', 'key:carol'] } });
    const handed = await send('PUT', '/packages/loss-summary/owners', { bearer: alice, json: { owners: ['key:bob'] } });
    expect(handed.body).toMatchObject({ owners: ['key:bob'], pending_owners: [] });
    expect((await send('POST', '/packages/loss-summary/owners/accept', { bearer: carol, json: {} })).status).toBe(404);
    expect((await publish(alice, '1.1.0')).status).toBe(403);
    expect((await publish(bob, '1.1.0')).status).toBe(201);

    // A registry admin's list applies at once.
    expect((await send('PUT', '/packages/loss-summary/owners', { bearer: admin, json: { owners: ['key:carol'] } })).body).toMatchObject({ owners: ['key:carol'], pending_owners: [] });
    const history = (await send('GET', '/packages/loss-summary/history')).body.entries.filter((e: { action: string }) => e.action === 'owners');
    expect(history.map((e: { identity: string; reason: string | null; owners: string[] }) => [e.identity, e.reason, e.owners])).toEqual([
      ['key:alice', 'invited: key:bob', ['key:alice']],
      ['key:bob', 'accepted: key:bob', ['key:alice', 'key:bob']],
      ['key:bob', 'invited: key:carol', ['key:alice', 'key:bob']],
      ['key:alice', 'removed: key:alice; invitation withdrawn: key:carol', ['key:bob']],
      ['key:admin', 'removed: key:bob; added: key:carol', ['key:carol']],
    ]);
  });
});
