import type { RegistryPackage } from '@agent-platform/contracts';
import { isConstraint } from '@agent-platform/packages';
import { Errors } from '../errors/errors.ts';
import type { InstalledPackageRecord } from './catalog-records.ts';
import { planPackages, type DependencyLookup, type FoundPackage, type PlannedPackage } from './install-plan.ts';
import { cached, resolveFromRegistry, type RegistryRoot } from './registry-resolver.ts';
import type { RegistryAccess } from './registry-source.ts';
import { downloadVerified } from './verified-download.ts';

/** What the catalog needs to install by name (DECISIONS D5; docs/catalog.md "Installing by name"). */
export interface CatalogRegistryDeps {
  /** The registry of `[catalog]`, read per request (a reload may change it); null when `registry_url` is empty. */
  access(): RegistryAccess | null;
  /** Archives needing a newer platform are refused, as packages from a path are. */
  platformVersion: string;
}

/** `{name, version}` or `{collection}` of `POST /catalog/install`. */
export type RegistryRequest = { name: string; version?: string | undefined } | { collection: string };

export interface RegistryPlanContext {
  registry: CatalogRegistryDeps | undefined;
  installed: (name: string) => Promise<InstalledPackageRecord | null>;
  installedAll: () => Promise<InstalledPackageRecord[]>;
}

/** The configured registry, or the CatalogError telling the operator to configure one. */
export function requireRegistry(registry: CatalogRegistryDeps | undefined, purpose: string): RegistryAccess & { platformVersion: string } {
  const access = registry?.access() ?? null;
  if (registry === undefined || access === null)
    throw Errors.catalog(`${purpose} needs a registry: set [catalog] registry_url in the platform's configuration file`);
  return { ...access, platformVersion: registry.platformVersion };
}

/**
 * The plan of an install from the registry: the request resolved with its whole dependency graph
 * (`resolveFromRegistry`), every package to install downloaded and verified (`downloadVerified`),
 * then planned by the same `planPackages` as an install from a path, so that the all-or-nothing
 * apply, the skill and activation checks and the no-downgrade rule are one code path.
 */
export async function planRegistryInstall(request: RegistryRequest, ctx: RegistryPlanContext): Promise<PlannedPackage[]> {
  const access = requireRegistry(ctx.registry, 'installing by name');
  if (access.trust.keyIds.length === 0)
    throw Errors.catalog(
      `no registry signing key is trusted, so nothing can be verified: add the registry's key to [catalog] trusted_keys (the public_key field of GET ${access.source.url}/signing-key); nothing was installed`,
      { registry: access.source.url },
    );
  const views = new Map<string, Promise<RegistryPackage | null>>();
  const viewOf = (name: string) => cached(views, name, () => access.source.package(name));
  const roots = await rootsOf(request, access, viewOf);
  const resolution = await resolveFromRegistry(roots, {
    source: access.source,
    fetch: (version) => downloadVerified(version, access, access.platformVersion),
    installed: ctx.installed,
    installedAll: ctx.installedAll,
  });
  // docs/catalog.md "Deprecated packages": a deprecated package installs, and the answer says so.
  const deprecations = new Map(
    await Promise.all([...resolution.packages.keys()].map(async (name) => [name, (await viewOf(name))?.deprecated?.message] as const)),
  );
  const found = (name: string): FoundPackage | undefined => {
    const pkg = resolution.packages.get(name);
    if (pkg === undefined) return undefined;
    const deprecated = deprecations.get(name);
    return { pkg, at: access.source.url, origin: 'registry', ...(deprecated === undefined ? {} : { deprecated }) };
  };
  const lookup: DependencyLookup = async (dep) => {
    if (resolution.reused.has(dep)) return 'installed';
    return found(dep) ?? { missing: 'not resolved from the registry' };
  };
  const rootPackages = [...new Set(roots.map((r) => r.name))].flatMap((name) => found(name) ?? []);
  return planPackages(rootPackages, { installed: ctx.installed, lookup });
}

/** A dist-tag as the registry names them (docs/registry.md "Dist-tags"): it never parses as a constraint. */
const DIST_TAG = /^[a-z][a-z0-9-]{0,31}$/;

async function rootsOf(
  request: RegistryRequest,
  access: RegistryAccess,
  viewOf: (name: string) => Promise<RegistryPackage | null>,
): Promise<RegistryRoot[]> {
  if ('name' in request) {
    const asked = request.version ?? '*';
    if (isConstraint(asked)) return [{ name: request.name, constraint: asked, needed_by: 'the request' }];
    if (!DIST_TAG.test(asked))
      throw Errors.validation(
        `version '${asked}' is neither a semver constraint (e.g. "^1.2.0", "~1.2.0", "=1.2.3", ">=1.0.0, <2.0.0", "*") nor a dist-tag (e.g. "next")`,
        { version: asked },
      );
    return [{ name: request.name, constraint: `=${await taggedVersion(request.name, asked, access, viewOf)}`, needed_by: `the request (tag ${asked})` }];
  }
  const collection = await access.source.collection(request.collection);
  if (collection === null) throw Errors.notInRegistry('collection', request.collection, access.source.url);
  if (collection.packages.length === 0) throw Errors.catalog(`collection ${collection.name} lists no packages; nothing was installed`);
  return collection.packages.map((p) => ({
    name: p.name,
    constraint: `=${p.version}`,
    needed_by: `collection ${collection.name} ${collection.version}`,
  }));
}

/** The version a dist-tag of the package names (`latest` too), or 404 naming the tags it has. */
async function taggedVersion(
  name: string,
  tag: string,
  access: RegistryAccess,
  viewOf: (name: string) => Promise<RegistryPackage | null>,
): Promise<string> {
  const view = await viewOf(name);
  if (view === null) throw Errors.notInRegistry('package', name, access.source.url);
  const tags = view.dist_tags ?? {};
  const version = tags[tag];
  if (version !== undefined) return version;
  throw Errors.distTagNotInRegistry(name, tag, Object.keys(tags), access.source.url);
}
