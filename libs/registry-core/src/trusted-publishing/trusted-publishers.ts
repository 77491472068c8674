import { TRUSTED_PUBLISHER_RESERVED_CLAIMS, type RegistryProvenance, type RegistryTrustedPublishers, type TrustedPublisher } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';
import { createIssuerStore } from '../auth/issuer-store.ts';
import { loadPackage } from '../packages/package-reads.ts';
import { afterChange, assertMayChange, assertTokenAllows, type RegistryActor, type RegistryContext } from '../packages/registry-context.ts';
import { RegistryErrors } from '../packages/registry-error.ts';
import { REGISTRY_COLLECTIONS, type RegistryPackageRecord } from '../registry-records.ts';
import { withTeamsOf } from '../teams/team-membership.ts';
import { provenanceOf, publisherMatches } from './trusted-grant.ts';

/**
 * One package's trusted publishers (`id` is the package name); absent or empty: none. The index
 * an exchange scans: the package record's `trusted_publishers` is what a change and a publish go
 * by (written first, with the ownership check), this copy follows it.
 */
export interface TrustedPublishersRecord {
  id: string;
  publishers: TrustedPublisher[];
  updated_at: string;
  updated_by: string;
}

const MAX_PUBLISHERS = 20;
const MAX_CLAIMS = 10;

export function trustedPublisherRecords(store: Store): Collection<TrustedPublishersRecord> {
  return store.collection<TrustedPublishersRecord>(REGISTRY_COLLECTIONS.trustedPublishers);
}

/** `GET /packages/{name}/trusted-publishers`: owners and registry admins (a token needs scope change-owners). */
export async function readTrustedPublishers(ctx: RegistryContext, name: string, caller: RegistryActor): Promise<RegistryTrustedPublishers> {
  const { pkg } = await loadPackage(ctx, name);
  // Members of a team among the owners act as owners (read for this request).
  const actor = await withTeamsOf(ctx.store, caller, pkg.owners);
  assertMayChange(pkg, actor, `see the trusted publishers of '${name}'`, 'change-owners');
  return { publishers: await publishersOf(ctx.store, pkg) };
}

/** A package's trusted publishers: its record's, or for one set before they were kept there, the index's. */
async function publishersOf(store: Store, pkg: Pick<RegistryPackageRecord, 'name' | 'trusted_publishers'>): Promise<TrustedPublisher[]> {
  return pkg.trusted_publishers ?? (await trustedPublisherRecords(store).get(pkg.name))?.doc.publishers ?? [];
}

/**
 * `PUT /packages/{name}/trusted-publishers` (docs/registry-auth.md "Trusted publishing"): an owner
 * (a registry admin, a token with scope change-owners) replaces the list. Every issuer must be
 * registered at /admin/issuers (its keys and audience are how a CI token is checked); claims are
 * 1-10 exact strings, never the validator's own (iss, aud, exp...). Bad input changes nothing.
 */
export async function replaceTrustedPublishers(
  ctx: RegistryContext,
  name: string,
  publishers: readonly TrustedPublisher[],
  caller: RegistryActor,
): Promise<RegistryTrustedPublishers> {
  const action = `change the trusted publishers of '${name}'`;
  const { pkg } = await loadPackage(ctx, name);
  const actor = await withTeamsOf(ctx.store, caller, pkg.owners);
  assertMayChange(pkg, actor, action, 'change-owners');
  const next = await validPublishers(ctx, publishers);
  // Checked again and written in one write of the package record: an owner removed by a concurrent
  // change is either refused here or removed after this change, never before it.
  await ctx.records.packages.update(name, (current) => {
    if (current === null) throw RegistryErrors.notFound('package', name);
    assertMayChange(current.doc, actor, action, 'change-owners');
    return { ...current.doc, trusted_publishers: next };
  });
  const now = ctx.clock.now().toISOString();
  // Then the exchange's index. A crash before it leaves the index behind until the PUT is sent
  // again (the caller had no answer): an exchange may then miss a publisher just added, or name a
  // package that no longer trusts the token, whose publish is refused (the record decides).
  await trustedPublisherRecords(ctx.store).upsert({ id: name, publishers: next, updated_at: now, updated_by: actor.identity });
  await afterChange(ctx, { name, at: now, action: 'trusted-publishers', version: null, identity: actor.identity, reason: null, security: false, trusted_publishers: next });
  return { publishers: next };
}

/** The packages trusting a CI token of `issuer` with these claims, each with its matching publishers; by name. */
export async function packagesTrusting(store: Store, issuer: string, claims: Readonly<Record<string, unknown>>): Promise<{ name: string; matching: TrustedPublisher[] }[]> {
  // One scan of the packages that use trusted publishing (not of every package): an exchange is once per CI run.
  const rows = await trustedPublisherRecords(store).find();
  return rows
    .map(({ doc }) => ({ name: doc.id, matching: doc.publishers.filter((p) => publisherMatches(p, issuer, claims)) }))
    .filter((row) => row.matching.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * For a publish with a trusted-publishing token: the provenance its version records, once the
 * package is checked to still trust the token's identity (an owner may have removed it since the
 * exchange: 403). Null for every other caller.
 */
export async function trustedPublishProvenance(ctx: RegistryContext, actor: RegistryActor, name: string): Promise<RegistryProvenance | null> {
  const trusted = actor.grant?.trusted;
  if (trusted === undefined) return null;
  assertTokenAllows(actor, 'publish-update', name);
  const pkg = await ctx.records.packages.get(name);
  const publishers = pkg === null ? [] : await publishersOf(ctx.store, pkg.doc);
  const matching = publishers.filter((p) => publisherMatches(p, trusted.issuer, trusted.claims));
  if (matching.length === 0)
    throw RegistryErrors.forbidden(`package '${name}' no longer trusts this CI identity (its trusted publishers changed): exchange a new token`, {
      name,
      identity: actor.identity,
    });
  return provenanceOf(actor.identity, trusted, matching);
}

/** Who may publish a version of an existing package: a trusted-publishing token of it, else its owners (assertMayChange). */
export function assertMayPublish(pkg: Pick<RegistryPackageRecord, 'name' | 'owners'>, actor: RegistryActor): void {
  if (actor.grant?.trusted !== undefined) return assertTokenAllows(actor, 'publish-update', pkg.name);
  assertMayChange(pkg, actor, `publish versions of '${pkg.name}'`, 'publish-update');
}

/** The list as stored (duplicates dropped), or 400 naming every problem (`details.problems`). */
async function validPublishers(ctx: RegistryContext, publishers: readonly TrustedPublisher[]): Promise<TrustedPublisher[]> {
  const problems: string[] = [];
  if (publishers.length > MAX_PUBLISHERS) problems.push(`at most ${MAX_PUBLISHERS} trusted publishers`);
  const issuers = createIssuerStore(ctx);
  const unique = new Map<string, TrustedPublisher>();
  for (const [i, publisher] of publishers.entries()) {
    const at = `publishers[${i}]`;
    if ((await issuers.findByIssuer(publisher.issuer)) === null)
      problems.push(`${at}.issuer '${publisher.issuer.slice(0, 120)}' is not a registered issuer (GET /admin/issuers; register it first)`);
    const claims = Object.entries(publisher.claims);
    if (claims.length === 0 || claims.length > MAX_CLAIMS) problems.push(`${at}.claims must name 1 to ${MAX_CLAIMS} claims`);
    for (const [claim, value] of claims) {
      if ((TRUSTED_PUBLISHER_RESERVED_CLAIMS as readonly string[]).includes(claim))
        problems.push(`${at}.claims.${claim}: '${claim}' is checked by the token validator, not matched (name claims such as repository, workflow, ref)`);
      else if (claim.trim() === '' || claim.length > 100 || /\p{Cc}/u.test(claim)) problems.push(`${at}.claims: a claim name must be 1-100 characters, no control characters`);
      if (typeof value !== 'string' || value.trim() === '' || value.length > 500)
        problems.push(`${at}.claims.${claim.slice(0, 100)} must be a non-blank string of at most 500 characters (matched exactly)`);
    }
    const sorted = Object.fromEntries(claims.sort(([a], [b]) => (a < b ? -1 : 1)));
    unique.set(JSON.stringify([publisher.issuer, sorted]), { issuer: publisher.issuer, claims: sorted });
  }
  if (problems.length > 0) throw RegistryErrors.validation(`invalid trusted publishers: ${problems.join('; ')}`, { problems });
  return [...unique.values()];
}
