import type { RegistryTeam, RegistryTeamDeleted, RegistryTeamInviteBody, RegistryTeamRole } from '@agent-platform/contracts';
import { isPackageName, packageNameFaults } from '@agent-platform/packages';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import { normalizeIdentity, ownerProblem } from '../packages/package-owners.ts';
import type { RegistryActor } from '../packages/registry-context.ts';
import { RegistryErrors } from '../packages/registry-error.ts';
import { registryRecords } from '../registry-records.ts';
import { isLiveTeam, MAX_TEAM_INVITATIONS, MAX_TEAM_MEMBERS, memberOf, openTeams, teamOwner, teamView, type RegistryTeamRecord } from './team-records.ts';

/** What `remove` took away: a member, or a pending invitation (withdrawn, or declined by the invitee). */
export type TeamRemoval = 'member' | 'invitation';

/**
 * Registry teams (docs/registry.md "Teams"): a team owns packages by being one of their owners
 * (`team:<name>`), and each of its members may then act on them as an owner would. Members join
 * only by accepting an invitation a team owner made; removing a member takes its rights away on
 * the next request (ownership checks read the team then: teams/team-membership.ts). A team
 * always keeps an owner. Teams are not in any token scope: only the caller's own credential
 * changes them (a token could otherwise widen itself by inviting another identity).
 */
export interface RegistryTeamService {
  /** The caller becomes the first owner. 400 bad name, 409 exists. */
  create(name: string, actor: RegistryActor): Promise<RegistryTeam>;
  /** Pending invitations only for the team's members, the invitees and registry admins (empty for anyone else). */
  get(name: string, viewer: RegistryActor): Promise<RegistryTeam>;
  /** Teams the caller is a member of or invited to, by name; every team for a registry admin. */
  list(actor: RegistryActor): Promise<RegistryTeam[]>;
  /** Team owners (and registry admins): invite a known identity, or change an existing member's role. */
  invite(name: string, body: RegistryTeamInviteBody, actor: RegistryActor): Promise<RegistryTeam>;
  /** Only the invited identity itself; 404 when it has no invitation. */
  accept(name: string, actor: RegistryActor): Promise<RegistryTeam>;
  /** A team owner or registry admin removes anyone; a member leaves, an invitee declines. 409 for the last owner. */
  remove(name: string, identity: string, actor: RegistryActor): Promise<{ team: RegistryTeam; removed: TeamRemoval }>;
  /**
   * A team owner or registry admin deletes the team: 409 while a package lists `team:<name>` among
   * its owners or pending owners (naming them). Its members lose every right at once; the name is
   * never given to a new team.
   */
  delete(name: string, actor: RegistryActor): Promise<RegistryTeamDeleted>;
}

export function createRegistryTeamService(deps: { store: Store; clock: { now(): Date } }): RegistryTeamService {
  const teams = openTeams(deps.store);
  const now = () => deps.clock.now().toISOString();

  /** One atomic change of an existing team (404 otherwise); `change` may throw a refusal, which writes nothing. */
  async function change(name: string, apply: (team: RegistryTeamRecord, at: string) => RegistryTeamRecord): Promise<RegistryTeam> {
    assertTeamName(name);
    const at = now();
    const updated = await teams.update(name, (current) => {
      if (!isLiveTeam(current?.doc)) throw RegistryErrors.notFound('team', name);
      return { ...apply(current.doc, at), updated_at: at };
    });
    if (updated === null) throw RegistryErrors.notFound('team', name);
    return teamView(updated.doc);
  }

  return {
    async create(name, actor) {
      assertOwnCredential(actor);
      assertTeamName(name);
      const at = now();
      const record: RegistryTeamRecord = {
        id: name,
        name,
        members: [{ identity: actor.identity, role: 'owner', joined_at: at }],
        invitations: [],
        created_at: at,
        created_by: actor.identity,
        updated_at: at,
      };
      try {
        await teams.insert(record);
      } catch (error) {
        if (!(error instanceof StoreDuplicateError)) throw error;
        if (isLiveTeam((await teams.get(name))?.doc)) throw RegistryErrors.conflict(`team '${name}' already exists`, { team: name });
        throw RegistryErrors.conflict(`team '${name}' was deleted, and a deleted team's name is not given to a new team: choose another name`, { team: name });
      }
      return teamView(record);
    },

    async get(name, viewer) {
      assertTeamName(name);
      const found = await teams.get(name);
      if (found === null || !isLiveTeam(found.doc)) throw RegistryErrors.notFound('team', name);
      const view = teamView(found.doc);
      // Who a team invited is its own business until they join: members are public, as owners of packages are.
      const insider =
        viewer.role === 'registry-admin' || memberOf(found.doc, viewer.identity) !== undefined || found.doc.invitations.some((i) => i.identity === viewer.identity);
      return insider ? view : { ...view, invitations: [] };
    },

    async list(actor) {
      const all = (await teams.find()).map((t) => t.doc).filter(isLiveTeam);
      const mine = actor.role === 'registry-admin' ? all : all.filter((t) => memberOf(t, actor.identity) !== undefined || t.invitations.some((i) => i.identity === actor.identity));
      return mine.sort((a, b) => a.name.localeCompare(b.name)).map(teamView);
    },

    async invite(name, body, actor) {
      assertOwnCredential(actor);
      assertTeamName(name);
      const identity = normalizeIdentity(body.identity, 'identity');
      const role: RegistryTeamRole = body.role ?? 'member';
      // Refusals in the order a caller can act on them: no team (404), not its owner (403), an
      // identity nobody could accept as (400); then the write checks the current team again.
      const stored = await teams.get(name);
      if (stored === null || !isLiveTeam(stored.doc)) throw RegistryErrors.notFound('team', name);
      assertTeamOwner(stored.doc, actor, 'invite members');
      if (memberOf(stored.doc, identity) === undefined) {
        const problem = await ownerProblem(deps, identity);
        if (problem !== null) throw RegistryErrors.validation(`identity '${identity.slice(0, 120)}' ${problem}`, { identity: identity.slice(0, 120) });
      }
      return change(name, (team, at) => {
        assertTeamOwner(team, actor, 'invite members');
        const member = memberOf(team, identity);
        if (member !== undefined) return changeRole(team, member.identity, member.role, role);
        if (team.members.length >= MAX_TEAM_MEMBERS || team.invitations.length >= MAX_TEAM_INVITATIONS)
          throw RegistryErrors.conflict(`team '${name}' is full: at most ${MAX_TEAM_MEMBERS} members and ${MAX_TEAM_INVITATIONS} pending invitations`, { team: name });
        const invitation = { identity, role, invited_by: actor.identity, invited_at: at };
        return { ...team, invitations: [...team.invitations.filter((i) => i.identity !== identity), invitation] };
      });
    },

    async accept(name, actor) {
      assertOwnCredential(actor);
      return change(name, (team, at) => {
        const invitation = team.invitations.find((i) => i.identity === actor.identity);
        if (invitation === undefined)
          throw RegistryErrors.noInvitation(`'${actor.identity}' has no invitation to team '${name}' (only the invited identity accepts its own invitation)`, {
            team: name,
            identity: actor.identity,
          });
        const others = team.invitations.filter((i) => i !== invitation);
        const members = memberOf(team, actor.identity) === undefined ? [...team.members, { identity: actor.identity, role: invitation.role, joined_at: at }] : team.members;
        return { ...team, members, invitations: others };
      });
    },

    async remove(name, identity, actor) {
      assertOwnCredential(actor);
      let removed: TeamRemoval = 'member';
      const team = await change(name, (current) => {
        if (identity !== actor.identity) assertTeamOwner(current, actor, 'remove members or withdraw invitations');
        const member = memberOf(current, identity);
        if (member === undefined) {
          if (!current.invitations.some((i) => i.identity === identity))
            throw RegistryErrors.notFound('team member', `${identity.slice(0, 200)} of ${name}`);
          removed = 'invitation';
          return { ...current, invitations: current.invitations.filter((i) => i.identity !== identity) };
        }
        removed = 'member';
        if (member.role === 'owner') assertNotLastOwner(current, identity);
        return { ...current, members: current.members.filter((m) => m.identity !== identity) };
      });
      return { team, removed };
    },

    async delete(name, actor) {
      assertOwnCredential(actor);
      assertTeamName(name);
      const stored = await teams.get(name);
      if (stored === null || !isLiveTeam(stored.doc)) throw RegistryErrors.notFound('team', name);
      assertTeamOwner(stored.doc, actor, 'delete the team');
      // A package that names the team keeps its entry: refused, so that no package is left with
      // fewer owners than its owners chose. (One racing this check names a team with no members:
      // it grants nothing, and the name is never reused.)
      const owner = teamOwner(name);
      const named = (await registryRecords(deps.store).packages.find())
        .map((p) => p.doc)
        .filter((p) => p.owners.includes(owner) || (p.pending_owners ?? []).some((i) => i.owner === owner))
        .map((p) => p.name)
        .sort();
      if (named.length > 0)
        throw RegistryErrors.conflict(
          `team '${name}' still owns or is invited to own ${named.length} package${named.length === 1 ? '' : 's'} (${named.slice(0, 10).join(', ')}${named.length > 10 ? ', ...' : ''}): remove ${owner} from their owners first`,
          { team: name, packages: named.slice(0, 50) },
        );
      const at = now();
      await change(name, (team) => {
        assertTeamOwner(team, actor, 'delete the team');
        return { ...team, members: [], invitations: [], deleted_at: at, deleted_by: actor.identity };
      });
      return { name, deleted_at: at, deleted_by: actor.identity };
    },
  };
}

function changeRole(team: RegistryTeamRecord, identity: string, from: RegistryTeamRole, to: RegistryTeamRole): RegistryTeamRecord {
  if (from === to) throw RegistryErrors.conflict(`'${identity}' is already a member of team '${team.name}' with role ${from}`, { team: team.name, identity, role: from });
  if (from === 'owner') assertNotLastOwner(team, identity);
  return { ...team, members: team.members.map((m) => (m.identity === identity ? { ...m, role: to } : m)) };
}

function assertNotLastOwner(team: RegistryTeamRecord, identity: string): void {
  if (team.members.filter((m) => m.role === 'owner').length > 1) return;
  throw RegistryErrors.conflict(`'${identity}' is the last owner of team '${team.name}': make another member an owner first (invite them with role owner)`, {
    team: team.name,
    identity,
  });
}

function assertTeamOwner(team: RegistryTeamRecord, actor: RegistryActor, action: string): void {
  if (actor.role === 'registry-admin' || memberOf(team, actor.identity)?.role === 'owner') return;
  const owners = team.members.filter((m) => m.role === 'owner').map((m) => m.identity);
  throw RegistryErrors.forbidden(`'${actor.identity}' may not ${action} of team '${team.name}': only its owners (${owners.join(', ')}) and registry admins may`, {
    team: team.name,
    identity: actor.identity,
  });
}

function assertOwnCredential(actor: RegistryActor): void {
  if (actor.grant !== undefined)
    throw RegistryErrors.forbidden('a registry token may not change teams: use your own registry key or access token', { identity: actor.identity });
}

/** A team name follows the package name rules (3-64 lower-case letters, digits and single hyphens). */
export function assertTeamName(name: string): void {
  if (!isPackageName(name))
    throw RegistryErrors.validation(
      `invalid team name '${name.slice(0, 80)}' (a team name follows the package name rules): ${packageNameFaults(name)
        .map((f) => f.message)
        .join('; ')}`,
      { team: name.slice(0, 80) },
    );
}
