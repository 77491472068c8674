import { Type, type Static } from 'typebox';

/**
 * Registry teams and two-sided ownership transfers (ours, docs/registry.md "Teams" and
 * "Ownership"): a team is a named set of identities that owns packages by being listed among a
 * package's owners as `team:<name>`; members join by accepting an invitation, and a new package
 * owner (an identity or a team) joins by accepting too.
 */

const Iso = (description: string) => Type.String({ description: `${description} ISO 8601 UTC.` });

/** `owner`: manages the team (invites, removes, accepts package ownership for it); `member`: acts on the team's packages. */
export const REGISTRY_TEAM_ROLES = ['owner', 'member'] as const;
export const RegistryTeamRole = Type.Enum(REGISTRY_TEAM_ROLES);
export type RegistryTeamRole = (typeof REGISTRY_TEAM_ROLES)[number];

export const RegistryTeamMember = Type.Object({
  identity: Type.String({ description: 'A qualified identity (`key:<name>`, `<issuer>#<sub>`).' }),
  role: RegistryTeamRole,
  joined_at: Iso('When it accepted (or created the team).'),
});
export type RegistryTeamMember = Static<typeof RegistryTeamMember>;

export const RegistryTeamInvitation = Type.Object({
  identity: Type.String({ description: 'Who is invited; only that identity accepts.' }),
  role: RegistryTeamRole,
  invited_by: Type.String(),
  invited_at: Iso('When.'),
});
export type RegistryTeamInvitation = Static<typeof RegistryTeamInvitation>;

/** `GET /teams/{team}`. */
export const RegistryTeam = Type.Object({
  name: Type.String({ description: 'Same rules as a package name; a package lists it among its owners as `team:<name>`.' }),
  members: Type.Array(RegistryTeamMember, { description: 'Owners first, then by joining time.' }),
  invitations: Type.Array(RegistryTeamInvitation, { description: "Pending, oldest first; shown to the team's members, the invitees and registry admins only (empty for anyone else)." }),
  created_at: Iso('When.'),
  created_by: Type.String(),
  updated_at: Iso('Last membership change.'),
});
export type RegistryTeam = Static<typeof RegistryTeam>;

export const RegistryTeamList = Type.Object({ teams: Type.Array(RegistryTeam, { description: 'By name.' }) });
export type RegistryTeamList = Static<typeof RegistryTeamList>;

/** `POST /teams`: the caller becomes its first owner. */
export const RegistryTeamCreateBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false });
export type RegistryTeamCreateBody = Static<typeof RegistryTeamCreateBody>;

/** `POST /teams/{team}/invitations` (team owners). */
export const RegistryTeamInviteBody = Type.Object(
  {
    identity: Type.String({ minLength: 1, maxLength: 4096, description: 'A qualified identity the registry knows.' }),
    role: Type.Optional(Type.Enum(REGISTRY_TEAM_ROLES, { description: 'Default `member`.' })),
  },
  { additionalProperties: false },
);
export type RegistryTeamInviteBody = Static<typeof RegistryTeamInviteBody>;

/** `DELETE /teams/{team}` (team owners, registry admins): refused while the team owns or is invited to own a package. */
export const RegistryTeamDeleted = Type.Object({
  name: Type.String({ description: 'The team; its name is not given to a new team again.' }),
  deleted_at: Iso('When.'),
  deleted_by: Type.String(),
});
export type RegistryTeamDeleted = Static<typeof RegistryTeamDeleted>;

export const RegistryTeamParams = Type.Object({ team: Type.String() });
export const RegistryTeamMemberParams = Type.Object({ team: Type.String(), identity: Type.String({ description: 'URL-encoded qualified identity.' }) });

/** One pending ownership invitation of a package (`PUT /packages/{name}/owners` by an owner). */
export const RegistryPendingOwner = Type.Object({
  owner: Type.String({ description: 'An identity, or `team:<name>`.' }),
  invited_by: Type.String(),
  invited_at: Iso('When.'),
});
export type RegistryPendingOwner = Static<typeof RegistryPendingOwner>;

/**
 * `GET /packages/{name}/owners` (any identity): the owners, and the pending invitations the caller
 * may see. Who a package invited is the owners' business until the invitee accepts, so the public
 * `GET /packages/{name}` leaves them out.
 */
export const RegistryPackageOwners = Type.Object({
  name: Type.String(),
  owners: Type.Array(Type.String(), { description: 'Identities and `team:<name>` teams, the first publisher first.' }),
  pending_owners: Type.Array(RegistryPendingOwner, {
    description: "Every invitation for the package's owners (and the members of an owning team) and registry admins; an invitee's own (or its team's, for a team owner); none for anyone else.",
  }),
});
export type RegistryPackageOwners = Static<typeof RegistryPackageOwners>;

/** `POST /packages/{name}/owners/accept`: which invitation the caller accepts (default: its own identity). */
export const RegistryOwnerAcceptBody = Type.Object(
  { owner: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Your identity (the default), or `team:<name>` of a team you own.' })) },
  { additionalProperties: false },
);
export type RegistryOwnerAcceptBody = Static<typeof RegistryOwnerAcceptBody>;
