import type { RegistryTeam, RegistryTeamInvitation, RegistryTeamMember } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';
import { REGISTRY_COLLECTIONS } from '../registry-records.ts';

/**
 * How a team is kept (docs/registry.md "Teams"): one record per team, members and pending
 * invitations inside it, so that every membership change is one atomic update of one document
 * (the last owner cannot be removed by two concurrent removals) and every ownership check reads
 * the membership as it is at that moment, in whatever registry process.
 */
export interface RegistryTeamRecord {
  /** The team name. */
  id: string;
  name: string;
  members: RegistryTeamMember[];
  invitations: RegistryTeamInvitation[];
  created_at: string;
  created_by: string;
  updated_at: string;
  /**
   * Set when the team was deleted (`DELETE /teams/{team}`): the record stays, emptied of members
   * and invitations, so that its name is never given to a new team, which would otherwise inherit
   * whatever still names `team:<name>` (a package owner list changed by a request racing the
   * deletion). A deleted team is 404 to every team route and grants nothing.
   */
  deleted_at?: string;
  deleted_by?: string;
}

/** A package lists a team among its owners as `team:<name>`; no identity starts so (registry-identity.ts). */
export const TEAM_OWNER_PREFIX = 'team:';

/** Members and pending invitations a team holds at most. */
export const MAX_TEAM_MEMBERS = 200;
export const MAX_TEAM_INVITATIONS = 50;

export function teamOwner(name: string): string {
  return `${TEAM_OWNER_PREFIX}${name}`;
}

/** The team behind an owner entry `team:<name>`; null for an identity. */
export function teamNameOf(owner: string): string | null {
  return owner.startsWith(TEAM_OWNER_PREFIX) ? owner.slice(TEAM_OWNER_PREFIX.length) : null;
}

/** A team that exists: not deleted. */
export function isLiveTeam(record: RegistryTeamRecord | null | undefined): record is RegistryTeamRecord {
  return record !== null && record !== undefined && record.deleted_at === undefined;
}

export function openTeams(store: Store): Collection<RegistryTeamRecord> {
  return store.collection<RegistryTeamRecord>(REGISTRY_COLLECTIONS.teams);
}

/** The wire view: owners first, then members, each by joining time. */
export function teamView(record: RegistryTeamRecord): RegistryTeam {
  const rank = (m: RegistryTeamMember) => (m.role === 'owner' ? 0 : 1);
  return {
    name: record.name,
    members: [...record.members].sort((a, b) => rank(a) - rank(b) || a.joined_at.localeCompare(b.joined_at)),
    invitations: [...record.invitations],
    created_at: record.created_at,
    created_by: record.created_by,
    updated_at: record.updated_at,
  };
}

export function memberOf(record: Pick<RegistryTeamRecord, 'members'>, identity: string): RegistryTeamMember | undefined {
  return record.members.find((m) => m.identity === identity);
}
