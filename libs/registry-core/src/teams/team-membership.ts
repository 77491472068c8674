import type { Store } from '@agent-platform/store';
import type { RegistryActor } from '../packages/registry-context.ts';
import { memberOf, openTeams, teamNameOf } from './team-records.ts';

/**
 * The actor with `teams` set to the teams among `owners` it is a member of now (either role), for
 * registry-context.ts `assertMayChange`. The team records are read on every call, never cached:
 * removing a member takes effect on its next request in every registry process sharing the store.
 * No read at all when it cannot matter: a registry admin, a direct owner, or no team among the owners.
 */
export async function withTeamsOf(store: Store, actor: RegistryActor, owners: readonly string[]): Promise<RegistryActor> {
  if (actor.role === 'registry-admin' || owners.includes(actor.identity)) return actor;
  const names = owners.map(teamNameOf).filter((name): name is string => name !== null);
  if (names.length === 0) return actor;
  const teams = openTeams(store);
  const records = await Promise.all(names.map((name) => teams.get(name)));
  const mine = names.filter((_, i) => {
    const team = records[i];
    return team !== null && team !== undefined && memberOf(team.doc, actor.identity) !== undefined;
  });
  return { ...actor, teams: mine };
}
