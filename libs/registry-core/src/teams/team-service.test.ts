import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { assertMayChange, type RegistryActor } from '../packages/registry-context.ts';
import { registryRecords } from '../registry-records.ts';
import { withTeamsOf } from './team-membership.ts';
import { createRegistryTeamService, type RegistryTeamService } from './team-service.ts';

// The team rules over the real embedded store (the HTTP tests in apps/registry cover the routes):
// joining takes the invitee's own acceptance, a team keeps an owner, and an ownership check sees a
// removal at once because it reads the team for each check.
const ALICE: RegistryActor = { identity: 'key:alice', role: 'publisher' };
const BOB: RegistryActor = { identity: 'key:bob', role: 'publisher' };
const CAROL: RegistryActor = { identity: 'key:carol', role: 'publisher' };
const ADMIN: RegistryActor = { identity: 'key:root', role: 'registry-admin' };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => error,
  );
}

describe('registry teams', () => {
  let dir: string;
  let store: Store;
  let teams: RegistryTeamService;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-registry-teams-'));
    store = await openEmbeddedStore({ path: join(dir, 'registry.db') });
    teams = createRegistryTeamService({ store, clock: systemClock });
    const keys = createRegistryKeyService({ store, clock: systemClock });
    for (const name of ['alice', 'bob', 'carol']) await keys.create({ name, role: 'publisher' });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lets only the invited identity join, with the role it was invited with', async () => {
    await teams.create('claims-team', ALICE);
    await teams.invite('claims-team', { identity: ' key:bob ', role: 'owner' }, ALICE);
    expect(await rejection(teams.accept('claims-team', CAROL))).toMatchObject({ category: 'NotFound', details: { kind: 'invitation' } });
    expect(await rejection(teams.accept('claims-team', ADMIN))).toMatchObject({ category: 'NotFound' });
    const joined = await teams.accept('claims-team', BOB);
    expect(joined.members.map((m) => [m.identity, m.role])).toEqual([
      ['key:alice', 'owner'],
      ['key:bob', 'owner'],
    ]);
    expect(await rejection(teams.accept('claims-team', BOB))).toMatchObject({ category: 'NotFound' });
    // A token acts on packages only: never on teams.
    const token: RegistryActor = { ...CAROL, grant: { scopes: ['change-owners'], packages: null } };
    expect(await rejection(teams.create('other-team', token))).toMatchObject({ category: 'PermissionDenied' });
  });

  it('keeps an owner: the last one can neither leave, be removed, nor be demoted', async () => {
    await teams.create('claims-team', ALICE);
    expect(await rejection(teams.remove('claims-team', 'key:alice', ALICE))).toMatchObject({ category: 'Conflict' });
    expect(await rejection(teams.remove('claims-team', 'key:alice', ADMIN))).toMatchObject({ category: 'Conflict' });
    expect(await rejection(teams.invite('claims-team', { identity: 'key:alice', role: 'member' }, ADMIN))).toMatchObject({ category: 'Conflict' });
    // An invitee may decline; a stranger is 404; someone else's removal needs a team owner.
    await teams.invite('claims-team', { identity: 'key:bob' }, ALICE);
    expect((await teams.remove('claims-team', 'key:bob', BOB)).removed).toBe('invitation');
    expect(await rejection(teams.remove('claims-team', 'key:carol', ALICE))).toMatchObject({ category: 'NotFound' });
    expect(await rejection(teams.remove('claims-team', 'key:alice', CAROL))).toMatchObject({ category: 'PermissionDenied' });
    expect(await rejection(teams.get('no-team', { identity: 'key:x', role: 'publisher' }))).toMatchObject({ category: 'NotFound', details: { kind: 'team' } });
  });

  it('grants a package owned by team:<name> to its current members, read at each check', async () => {
    await teams.create('claims-team', ALICE);
    await teams.invite('claims-team', { identity: 'key:bob' }, ALICE);
    await teams.accept('claims-team', BOB);
    const pkg = { name: 'loss-summary', owners: ['key:carol', 'team:claims-team'] };
    const check = async (actor: RegistryActor) => assertMayChange(pkg, await withTeamsOf(store, actor, pkg.owners), 'yank versions', 'yank');
    await check(BOB);
    await check(ALICE);
    // The team's membership does not bypass a token's scopes.
    const yankless: RegistryActor = { ...BOB, grant: { scopes: ['publish-update'], packages: null } };
    expect(await rejection(check(yankless))).toMatchObject({ category: 'PermissionDenied' });
    await teams.remove('claims-team', 'key:bob', ALICE);
    expect(await rejection(check(BOB))).toMatchObject({ category: 'PermissionDenied', message: expect.stringContaining('belongs to key:carol, team:claims-team') });
    // A team owner is not an owner of a package the team does not own.
    const other = { name: 'other-pkg', owners: ['key:carol'] };
    expect(() => assertMayChange(other, ALICE, 'yank versions', 'yank')).toThrow("'key:alice' may not yank versions");
  });

  it('deletes a team only when no package names it; its members lose their rights, and its name is never reused', async () => {
    await teams.create('claims-team', ALICE);
    await teams.invite('claims-team', { identity: 'key:bob' }, ALICE);
    await teams.accept('claims-team', BOB);
    const packages = registryRecords(store).packages;
    const at = new Date().toISOString();
    await packages.insert({ id: 'loss-summary', name: 'loss-summary', type: 'skill', owners: ['key:carol', 'team:claims-team'], created_at: at, updated_at: at });
    await packages.insert({
      id: 'fnol-triage',
      name: 'fnol-triage',
      type: 'competency',
      owners: ['key:carol'],
      pending_owners: [{ owner: 'team:claims-team', invited_by: 'key:carol', invited_at: at }],
      created_at: at,
      updated_at: at,
    });
    // Only a team owner (or a registry admin), with its own credential.
    expect(await rejection(teams.delete('claims-team', BOB))).toMatchObject({ category: 'PermissionDenied' });
    expect(await rejection(teams.delete('claims-team', { ...ALICE, grant: { scopes: ['change-owners'], packages: null } }))).toMatchObject({ category: 'PermissionDenied' });
    // Refused, naming both packages, while one lists it as an owner and one has invited it.
    const refused = await rejection(teams.delete('claims-team', ALICE));
    expect(refused).toMatchObject({ category: 'Conflict', details: { team: 'claims-team', packages: ['fnol-triage', 'loss-summary'] } });
    expect((await teams.get('claims-team', ALICE)).members).toHaveLength(2);
    await packages.update('loss-summary', (p) => (p === null ? null : { ...p.doc, owners: ['key:carol'] }));
    await packages.update('fnol-triage', (p) => (p === null ? null : { ...p.doc, pending_owners: [] }));

    expect(await teams.delete('claims-team', ALICE)).toMatchObject({ name: 'claims-team', deleted_by: 'key:alice', deleted_at: expect.any(String) });
    expect(await rejection(teams.get('claims-team', ADMIN))).toMatchObject({ category: 'NotFound', details: { kind: 'team' } });
    expect(await teams.list(ADMIN)).toEqual([]);
    expect(await rejection(teams.invite('claims-team', { identity: 'key:carol' }, ALICE))).toMatchObject({ category: 'NotFound' });
    expect(await rejection(teams.remove('claims-team', 'key:bob', ALICE))).toMatchObject({ category: 'NotFound' });
    expect(await rejection(teams.delete('claims-team', ALICE))).toMatchObject({ category: 'NotFound' });
    // A package that still named it (a change racing the deletion) grants its old members nothing.
    const raced = { name: 'loss-summary', owners: ['key:carol', 'team:claims-team'] };
    expect(await rejection((async () => assertMayChange(raced, await withTeamsOf(store, BOB, raced.owners), 'yank versions', 'yank'))())).toMatchObject({
      category: 'PermissionDenied',
    });
    // Nobody gets the name again, so nobody inherits what still names it.
    expect(await rejection(teams.create('claims-team', CAROL))).toMatchObject({ category: 'Conflict', message: expect.stringContaining('was deleted') });
  });
});
