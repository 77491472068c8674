import type { RegistryPackage, RegistryPackageOwners, RegistryPendingOwner } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { createIssuerStore } from '../auth/issuer-store.ts';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { KEY_IDENTITY_PREFIX, parseRegistryIdentity } from '../auth/registry-identity.ts';
import type { RegistryPackageRecord } from '../registry-records.ts';
import { withTeamsOf } from '../teams/team-membership.ts';
import { isLiveTeam, memberOf, openTeams, teamNameOf } from '../teams/team-records.ts';
import { changePackage } from './package-change.ts';
import { loadPackage } from './package-reads.ts';
import { packageView } from './package-views.ts';
import { afterChange, assertTokenAllows, type RegistryActor, type RegistryContext } from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';

/** An issuer URL (at most 2048 characters), `#` and a subject. */
const MAX_IDENTITY = 4096;

/**
 * `PUT /packages/{name}/owners` (docs/registry.md "Ownership"). Transfers are two-sided: an
 * owner's list removes the owners it leaves out at once, but an owner it adds (an identity or a
 * `team:<name>`) is only invited (`pending_owners`) until that owner accepts (`acceptOwner`);
 * pending invitations the list leaves out are withdrawn. The owners kept must not be empty, so a
 * package always has an accepted owner. A registry admin's list is applied at once, as it is (the
 * way to give an orphaned package owners). Every new owner must be a qualified identity the
 * registry knows, or an existing team; bad input changes nothing.
 */
export async function replaceOwners(
  ctx: RegistryContext,
  name: string,
  owners: readonly string[],
  actor: RegistryActor,
): Promise<RegistryPackage> {
  const next = owners.map((o) => normalizeIdentity(o, 'owner'));
  const unique = [...new Set(next)];
  const immediate = actor.role === 'registry-admin';
  return changePackage(ctx, name, actor, {
    action: `change the owners of '${name}'`,
    scope: 'change-owners',
    check: async (pkg) => {
      for (const owner of unique) {
        // An owner already on the list stays allowed (its key may since be revoked): only new names are looked up.
        const problem = pkg.owners.includes(owner) ? null : await packageOwnerProblem(ctx, owner);
        if (problem !== null) throw RegistryErrors.validation(`owner '${owner.slice(0, 120)}' ${problem}`, { owner: owner.slice(0, 120) });
      }
      if (!immediate && !unique.some((o) => pkg.owners.includes(o))) throw leftWithoutOwner(name);
    },
    apply: (current, now) => {
      if (immediate) return { ...current, owners: unique, pending_owners: [], updated_at: now };
      const kept = unique.filter((o) => current.owners.includes(o));
      if (kept.length === 0) throw leftWithoutOwner(name);
      const pending = current.pending_owners ?? [];
      const invited = unique
        .filter((o) => !current.owners.includes(o))
        .map((owner) => pending.find((p) => p.owner === owner) ?? { owner, invited_by: actor.identity, invited_at: now });
      return { ...current, owners: kept, pending_owners: invited, updated_at: now };
    },
    line: (before, after) => ({ action: 'owners', version: null, reason: ownersChange(before, after), owners: after.owners }),
  });
}

/**
 * `POST /packages/{name}/owners/accept` (docs/registry.md "Ownership"): the invited owner joins.
 * Only the invited identity itself accepts its invitation, and only an owner of the team accepts a
 * team's (`owner: "team:<name>"`); nobody accepts for someone else, a registry admin included
 * (it sets owners directly instead). A token needs scope `change-owners` for the package.
 */
export async function acceptOwner(ctx: RegistryContext, name: string, owner: string | undefined, actor: RegistryActor): Promise<RegistryPackage> {
  const { versions } = await loadPackage(ctx, name);
  assertTokenAllows(actor, 'change-owners', name);
  if (actor.role === 'reader') throw RegistryErrors.forbidden(`role reader may not own packages`, { name, identity: actor.identity });
  const invitee = owner === undefined ? actor.identity : normalizeIdentity(owner, 'owner');
  await assertMayAcceptFor(ctx, invitee, actor);
  const now = ctx.clock.now().toISOString();
  const updated = await ctx.records.packages.update(name, (current) => {
    if (current === null) throw RegistryErrors.notFound('package', name);
    const pending = current.doc.pending_owners ?? [];
    if (!pending.some((p) => p.owner === invitee))
      throw RegistryErrors.noInvitation(`'${invitee.slice(0, 200)}' has no invitation to own package '${name}' (an owner invites with PUT /packages/${name}/owners)`, {
        name,
        owner: invitee.slice(0, 200),
      });
    const owners = current.doc.owners.includes(invitee) ? current.doc.owners : [...current.doc.owners, invitee];
    return { ...current.doc, owners, pending_owners: pending.filter((p) => p.owner !== invitee), updated_at: now };
  });
  if (updated === null) throw RegistryErrors.notFound('package', name);
  const reason = invitee === actor.identity ? `accepted: ${invitee}` : `accepted: ${invitee} (by ${actor.identity})`;
  await afterChange(ctx, { name, at: now, action: 'owners', version: null, identity: actor.identity, reason, security: false, owners: updated.doc.owners });
  return packageView(updated.doc, versions);
}

/**
 * `GET /packages/{name}/owners`: the owners, and of the pending invitations every one for the
 * package's owners (directly, or as a member of an owning team) and registry admins, the caller's
 * own (or its team's, when it owns that team) for an invitee, none for anyone else. A read: a
 * token's scopes do not limit it.
 */
export async function readOwners(ctx: RegistryContext, name: string, actor: RegistryActor): Promise<RegistryPackageOwners> {
  const { pkg } = await loadPackage(ctx, name);
  const pending = pkg.pending_owners ?? [];
  const insider =
    actor.role === 'registry-admin' || pkg.owners.includes(actor.identity) || ((await withTeamsOf(ctx.store, actor, pkg.owners)).teams?.length ?? 0) > 0;
  return { name: pkg.name, owners: [...pkg.owners], pending_owners: insider ? [...pending] : await ownInvitations(ctx, pending, actor) };
}

/** The invitations made to the caller itself, or to a team it owns. */
async function ownInvitations(ctx: RegistryContext, pending: readonly RegistryPendingOwner[], actor: RegistryActor): Promise<RegistryPendingOwner[]> {
  const mine: RegistryPendingOwner[] = [];
  for (const invitation of pending) {
    const team = teamNameOf(invitation.owner);
    if (team === null ? invitation.owner === actor.identity : memberOf((await openTeams(ctx.store).get(team))?.doc ?? { members: [] }, actor.identity)?.role === 'owner')
      mine.push(invitation);
  }
  return mine;
}

/** The caller is the invited identity itself, or an owner of the invited team (403 otherwise). */
async function assertMayAcceptFor(ctx: RegistryContext, invitee: string, actor: RegistryActor): Promise<void> {
  const team = teamNameOf(invitee);
  if (team === null) {
    if (invitee === actor.identity) return;
    throw RegistryErrors.forbidden(`'${actor.identity}' may not accept an invitation made to '${invitee.slice(0, 200)}': only that identity accepts it`, {
      identity: actor.identity,
      owner: invitee.slice(0, 200),
    });
  }
  const record = await openTeams(ctx.store).get(team);
  if (record !== null && memberOf(record.doc, actor.identity)?.role === 'owner') return;
  throw RegistryErrors.forbidden(`'${actor.identity}' may not accept for '${invitee}': only an owner of team '${team}' accepts package ownership for it`, {
    identity: actor.identity,
    owner: invitee,
  });
}

/** A history line's reason for an owner list change: who was invited, who removed, what was withdrawn. */
function ownersChange(before: RegistryPackageRecord, after: RegistryPackageRecord): string | null {
  const pendingBefore = (before.pending_owners ?? []).map((p) => p.owner);
  const pendingAfter = (after.pending_owners ?? []).map((p) => p.owner);
  const parts = [
    ['invited', pendingAfter.filter((o) => !pendingBefore.includes(o))],
    ['removed', before.owners.filter((o) => !after.owners.includes(o))],
    ['added', after.owners.filter((o) => !before.owners.includes(o))],
    ['invitation withdrawn', pendingBefore.filter((o) => !pendingAfter.includes(o) && !after.owners.includes(o))],
  ] as const;
  const said = parts.filter(([, who]) => who.length > 0).map(([what, who]) => `${what}: ${who.join(', ')}`);
  return said.length === 0 ? null : said.join('; ');
}

function leftWithoutOwner(name: string) {
  return RegistryErrors.conflict(
    `package '${name}' would be left without an owner: new owners join only when they accept (POST /packages/${name}/owners/accept); keep a current owner on the list until then`,
    { name },
  );
}

/** Why `owner` cannot be invited to own a package, or null: an identity (`ownerProblem`) or an existing team. */
async function packageOwnerProblem(ctx: RegistryContext, owner: string): Promise<string | null> {
  const team = teamNameOf(owner);
  if (team === null) return ownerProblem(ctx, owner);
  return isLiveTeam((await openTeams(ctx.store).get(team))?.doc) ? null : `names no team of this registry (POST /teams makes one)`;
}

/**
 * Why `identity` cannot become an owner or a team member, or null (docs/registry.md "Ownership"):
 * it must be qualified, and name a registry key that can still be used (not revoked, not expired)
 * or a registered issuer. A token's subject cannot be checked with its provider: any subject of a
 * registered issuer is accepted.
 */
export async function ownerProblem(deps: { store: Store; clock: { now(): Date } }, identity: string): Promise<string | null> {
  const parsed = parseRegistryIdentity(identity);
  if (parsed === null)
    return `is not a qualified identity: name a registry key as ${KEY_IDENTITY_PREFIX}<key name> or a token's caller as <issuer>#<sub> (GET /auth/whoami shows yours)`;
  if (parsed.kind === 'key') {
    const usable = await createRegistryKeyService(deps).hasLiveKey(parsed.name);
    return usable ? null : `names no registry key in use (GET /keys lists them; create the key first)`;
  }
  const issuer = await createIssuerStore(deps).findByIssuer(parsed.issuer);
  return issuer === null ? `names an issuer this registry does not know (${parsed.issuer.slice(0, 120)}; GET /admin/issuers lists them)` : null;
}

/** An identity as given (trimmed), or 400: 1-4096 characters, no control characters. */
export function normalizeIdentity(value: string, field: 'owner' | 'identity'): string {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > MAX_IDENTITY || /\p{Cc}/u.test(trimmed))
    throw RegistryErrors.validation(`${field} '${trimmed.slice(0, 80)}' is not an identity: 1-${MAX_IDENTITY} characters, no control characters`, {
      [field]: trimmed.slice(0, 80),
    });
  return trimmed;
}
