import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { assertMayChange, type RegistryActor } from '../packages/registry-context.ts';
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
});
