import type { RegistryRole, RegistryTokenScope } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { isPackageName, isVersion, packageNameFaults } from '@agent-platform/packages';
import type { Store } from '@agent-platform/store';
import type { ArchiveStore } from '../archive-store/archive-store.ts';
import {
  QUALIFIED_IDENTITIES,
  REGISTRY_GENERATION_COUNTER,
  registryRecords,
  type RegistryHistoryRecord,
  type RegistryPackageRecord,
  type RegistryRecords,
} from '../registry-records.ts';
import type { RegistrySigner } from '../signing/registry-signing.ts';
import { RegistryErrors } from './registry-error.ts';
import { patternCovers } from '../auth/registry-tokens.ts';
import { teamNameOf } from '../teams/team-records.ts';
import type { TrustedGrant } from '../trusted-publishing/trusted-grant.ts';

/** Who asks: the identity the registry's auth hook established, with its registry role. */
export interface RegistryActor {
  identity: string;
  role: RegistryRole;
  /**
   * Set when the caller presented a publisher token (auth/registry-tokens.ts): it acts as
   * `identity` only for these scopes and package patterns (null = every package). `trusted`: a
   * token minted by a trusted-publishing exchange, which only publishes (trusted-publishing/).
   */
  grant?: { scopes: readonly RegistryTokenScope[]; packages: readonly string[] | null; trusted?: TrustedGrant };
  /**
   * The teams among a package's owners that `identity` is a member of, read from the store for
   * this request (teams/team-membership.ts `withTeamsOf`), never cached: a member removed from a
   * team loses its rights on the next request, in every registry process.
   */
  teams?: readonly string[];
}

/** What each scope lets a token do, for refusals. */
const SCOPE_ACTIONS: Record<RegistryTokenScope, string> = {
  'publish-new': 'publish a new package',
  'publish-update': 'publish versions of an existing package',
  yank: 'yank or un-yank versions',
  'change-owners': 'change owners',
};

/** A token caller must hold `scope` for package `name` (403 naming what the token lacks); any other caller passes. */
export function assertTokenAllows(actor: RegistryActor, scope: RegistryTokenScope, name: string): void {
  const grant = actor.grant;
  if (grant === undefined) return;
  if (!grant.scopes.includes(scope))
    throw RegistryErrors.forbidden(`this token may not ${SCOPE_ACTIONS[scope]} (scope '${scope}'); its scopes: ${grant.scopes.join(', ')}`, {
      name,
      scope,
    });
  if (grant.packages !== null && !grant.packages.some((pattern) => patternCovers(pattern, name)))
    throw RegistryErrors.forbidden(`this token is limited to the packages ${grant.packages.join(', ')}; '${name}' is not one of them`, {
      name,
      scope,
    });
}

/** What the package service runs on (one composition root builds it: apps/registry compose.ts). */
export interface PackageRegistryDeps {
  /** Metadata: packages, versions, history, revocations (registry-records.ts). */
  store: Store;
  /** The archive bytes. */
  archives: ArchiveStore;
  /** The registry's Ed25519 key: signs every accepted version and the revocation feed. */
  signer: RegistrySigner;
  clock: { now(): Date };
  /** Where a security yank's signed feed is pushed (`registry.revocations`), for platforms sharing it. */
  bus: Pick<Bus, 'notify'>;
  /** A push or bookkeeping step that failed after the change itself was recorded. */
  logger: { warn(object: Record<string, unknown>, message: string): void };
}

/** The deps plus the opened records, shared by the service's operations. */
export interface RegistryContext extends PackageRegistryDeps {
  records: RegistryRecords;
}

export function openRegistryContext(deps: PackageRegistryDeps): RegistryContext {
  return { ...deps, records: registryRecords(deps.store) };
}

/** A path's package name, or 400 naming what is wrong with it. */
export function assertName(name: string): void {
  if (!isPackageName(name))
    throw RegistryErrors.validation(
      `invalid package name '${name.slice(0, 80)}': ${packageNameFaults(name)
        .map((f) => f.message)
        .join('; ')}`,
      {
        name: name.slice(0, 80),
      },
    );
}

/** A path's version, or 400: versions are semver 2.0 (spec §Versioning 3). */
export function assertVersion(version: string): void {
  if (!isVersion(version))
    throw RegistryErrors.validation(
      `invalid version '${version.slice(0, 80)}': expected semver 2.0 (MAJOR.MINOR.PATCH with an optional pre-release)`,
      {
        version: version.slice(0, 80),
      },
    );
}

/** Owners of the package act on it; so does a registry admin. A reader never changes anything. */
export function assertMayChange(
  pkg: Pick<RegistryPackageRecord, 'name' | 'owners'>,
  actor: RegistryActor,
  action: string,
  scope: RegistryTokenScope,
): void {
  assertTokenAllows(actor, scope, pkg.name);
  // Publishing by trusted publishing is decided in publish-version.ts; such a token does nothing else.
  if (actor.grant?.trusted !== undefined)
    throw RegistryErrors.forbidden(`a trusted publishing token only publishes new versions; to ${action}, use an owner's own credential`, {
      name: pkg.name,
      identity: actor.identity,
    });
  if (actor.role === 'reader')
    throw RegistryErrors.forbidden(`role reader may not ${action}`, {
      name: pkg.name,
      identity: actor.identity,
    });
  // Identities are qualified (`key:<name>`, `<issuer>#<sub>`), so an exact match is the same credential source.
  if (actor.role === 'registry-admin' || pkg.owners.includes(actor.identity)) return;
  // A team owner (`team:<name>`) lets its current members act (actor.teams, read for this request).
  if (pkg.owners.some((owner) => actor.teams?.includes(teamNameOf(owner) ?? '') === true)) return;
  const owners = pkg.owners.length === 0 ? 'no owner (a registry-admin sets its owners)' : pkg.owners.join(', ');
  throw RegistryErrors.forbidden(
    `'${actor.identity}' may not ${action}: package '${pkg.name}' belongs to ${owners}`,
    {
      name: pkg.name,
      identity: actor.identity,
    },
  );
}

/**
 * What follows every accepted change, once the change itself is stored: its history line, the
 * package's `updated_at`, and the generation counter search indexes watch. A failure here is
 * logged, not answered: the change happened and must not be retried as if it had not.
 */
export async function afterChange(ctx: RegistryContext, entry: RegistryHistoryRecord): Promise<void> {
  try {
    await ctx.records.history.append(() => ({ ...entry, identities: QUALIFIED_IDENTITIES }));
    await ctx.records.packages.update(entry.name, (current) =>
      current === null || current.doc.updated_at >= entry.at
        ? null
        : { ...current.doc, updated_at: entry.at },
    );
    await ctx.store.counters.add(REGISTRY_GENERATION_COUNTER, 1);
  } catch (err) {
    ctx.logger.warn(
      { err, name: entry.name, action: entry.action },
      'registry bookkeeping after a change failed (history, updated_at or generation)',
    );
  }
}
