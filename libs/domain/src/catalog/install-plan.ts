import { dirname, join } from 'node:path';
import { compareVersions, satisfies, type LoadedPackage } from '@agent-platform/packages';
import { Errors } from '../errors/errors.ts';
import type { InstalledPackageRecord, PackageOrigin } from './catalog-records.ts';
import type { PackageSource } from './package-source.ts';

/** What installing one package of a plan does. */
export type InstallAction = 'install' | 'upgrade' | 'unchanged';

export interface PlannedPackage {
  pkg: LoadedPackage;
  name: string;
  version: string;
  action: InstallAction;
  /** The installed record this replaces (upgrade, unchanged). */
  previous: InstalledPackageRecord | null;
  /** `[dependencies]` keys plus a workflow's `agents_required`. */
  dependencies: string[];
  origin: PackageOrigin;
  /** The registry's deprecation message of the package, when its owners deprecated it. */
  deprecated?: string;
}

export interface MissingPackage {
  name: string;
  constraint: string;
  needed_by: string;
  reason: string;
}

/** A package read and validated, ready to plan. */
export interface FoundPackage {
  pkg: LoadedPackage;
  /** Its directory (`path`), or the registry URL it was downloaded from (`registry`). */
  at: string;
  origin: PackageOrigin;
  /** The registry's deprecation message of the package, when its owners deprecated it. */
  deprecated?: string;
}

/**
 * Where a dependency that this install does not bring yet comes from: `'installed'` reuses the
 * installed package, a `FoundPackage` is planned (and its own dependencies after it), `missing`
 * says why neither works.
 */
export type DependencyLookup = (
  dependency: string,
  constraint: string,
  neededBy: FoundPackage,
) => Promise<FoundPackage | 'installed' | { missing: string }>;

export interface PlanContext {
  source: PackageSource;
  installed(name: string): Promise<InstalledPackageRecord | null>;
}

/**
 * Resolves everything installing the package at `rootDir` needs, without writing anything, in
 * dependency order (dependencies before their dependents). Resolution rule (docs/catalog.md):
 * a dependency already installed at a version satisfying the constraint is reused; otherwise it
 * is read from the directory named after it beside the package that needs it
 * (`<parent dir>/<dependency name>`). Every missing dependency is collected and reported at once
 * as `MissingDependency`; a cycle is a `CatalogError`.
 */
export async function planInstall(rootDir: string, ctx: PlanContext): Promise<PlannedPackage[]> {
  const root = await ctx.source.load(rootDir);
  if (root === null) throw Errors.validation(`no package directory at ${rootDir}`, { path: rootDir });
  const lookup: DependencyLookup = async (dep, constraint, neededBy) => {
    const installed = await ctx.installed(dep);
    if (installed !== null && satisfies(installed.version, constraint)) return 'installed';
    const siblingDir = join(dirname(neededBy.at), dep);
    const sibling = await ctx.source.load(siblingDir);
    const problem = siblingProblem(dep, constraint, siblingDir, sibling, installed);
    if (problem !== null || sibling === null) return { missing: problem ?? 'not found' };
    return { pkg: sibling, at: siblingDir, origin: 'path' };
  };
  return planPackages([{ pkg: root, at: rootDir, origin: 'path' }], { installed: (name) => ctx.installed(name), lookup });
}

/**
 * The plan of `roots` (each with its dependencies, found through `lookup`), in dependency order:
 * the planning shared by installs from a path and from a registry. A dependency this install
 * already brings must satisfy every constraint on it; a cycle is a `CatalogError`; every missing
 * dependency is reported at once as `MissingDependency`; an older version than the installed one
 * is refused (no downgrade).
 */
export async function planPackages(
  roots: readonly FoundPackage[],
  ctx: { installed: (name: string) => Promise<InstalledPackageRecord | null>; lookup: DependencyLookup },
): Promise<PlannedPackage[]> {
  const planned = new Map<string, PlannedPackage>();
  const order: PlannedPackage[] = [];
  const missing: MissingPackage[] = [];

  const visit = async (found: FoundPackage, stack: readonly string[]): Promise<void> => {
    const { pkg } = found;
    const name = pkg.manifest.package.name;
    if (planned.has(name)) return;
    const path = [...stack, name];
    const dependencies = dependenciesOf(pkg);
    for (const [dep, constraint] of dependencies) {
      if (path.includes(dep))
        throw Errors.catalog(`dependency cycle: ${[...path, dep].join(' -> ')}`, { cycle: [...path, dep] });
      const already = planned.get(dep);
      if (already !== undefined) {
        if (!satisfies(already.version, constraint))
          missing.push({
            name: dep,
            constraint,
            needed_by: name,
            reason: `this install brings version ${already.version}`,
          });
        continue;
      }
      const next = await ctx.lookup(dep, constraint, found);
      if (next === 'installed') continue;
      if ('missing' in next) {
        missing.push({ name: dep, constraint, needed_by: name, reason: next.missing });
        continue;
      }
      await visit(next, path);
    }
    if (planned.has(name)) return;
    const previous = await ctx.installed(name);
    const entry: PlannedPackage = {
      pkg,
      name,
      version: pkg.manifest.package.version,
      action: decideAction(pkg, previous),
      previous,
      dependencies: dependencies.map(([dep]) => dep),
      origin: found.origin,
      ...(found.deprecated === undefined ? {} : { deprecated: found.deprecated }),
    };
    planned.set(name, entry);
    order.push(entry);
  };

  for (const root of roots) await visit(root, []);
  if (missing.length > 0) {
    const list = missing
      .map((m) => `${m.name} ${m.constraint} (needed by ${m.needed_by}: ${m.reason})`)
      .join('; ');
    throw Errors.missingDependency(`missing dependency: ${list}; nothing was installed`, { missing });
  }
  return order;
}

/** Mandatory dependencies with their constraints: `[dependencies]`, then a workflow's `agents_required` (any version). */
export function dependenciesOf(pkg: Pick<LoadedPackage, 'manifest' | 'payload'>): Array<[string, string]> {
  const deps = new Map(Object.entries(pkg.manifest.dependencies));
  if (pkg.payload.file === 'workflow.json')
    for (const agent of pkg.payload.data.agents_required) if (!deps.has(agent)) deps.set(agent, '*');
  return [...deps.entries()];
}

function siblingProblem(
  name: string,
  constraint: string,
  dir: string,
  sibling: LoadedPackage | null,
  installed: InstalledPackageRecord | null,
): string | null {
  const have =
    installed === null ? 'not installed' : `installed version ${installed.version} does not satisfy it`;
  if (sibling === null) return `${have}, and there is no package directory at ${dir}`;
  if (sibling.manifest.package.name !== name) return `${dir} holds package ${sibling.manifest.package.name}`;
  if (!satisfies(sibling.manifest.package.version, constraint))
    return `${have}, and ${dir} holds version ${sibling.manifest.package.version}`;
  return null;
}

/** Same version: nothing to do. Newer: upgrade in place. Older: refused (no downgrade). */
function decideAction(pkg: LoadedPackage, previous: InstalledPackageRecord | null): InstallAction {
  if (previous === null) return 'install';
  const { name, type, version } = pkg.manifest.package;
  if (previous.type !== type)
    throw Errors.catalog(
      `package ${name} is installed as a ${previous.type}; it cannot be replaced by a ${type}`,
      {
        name,
        installed_type: previous.type,
        type,
      },
    );
  const order = compareVersions(version, previous.version);
  if (order === 0) return 'unchanged';
  if (order > 0) return 'upgrade';
  throw Errors.catalog(
    `package ${name} ${previous.version} is installed; installing the older ${version} is refused (no downgrade: uninstall it first)`,
    { name, installed_version: previous.version, version },
  );
}
