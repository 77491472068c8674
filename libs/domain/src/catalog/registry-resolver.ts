import type { RegistryVersion } from '@agent-platform/contracts';
import { compareVersions, satisfies, type LoadedPackage, type PackagePayload } from '@agent-platform/packages';
import { Errors } from '../errors/errors.ts';
import type { InstalledPackageRecord } from './catalog-records.ts';
import { dependenciesOf } from './install-plan.ts';
import type { RegistrySource } from './registry-source.ts';

/** A constraint on a package and who imposed it (`the request`, `fnol-triage 1.2.0`, ...). */
export interface Requirement {
  constraint: string;
  needed_by: string;
}

/** A package the request asks for: a name with its constraint, or a collection member (`=version`). */
export interface RegistryRoot extends Requirement {
  name: string;
}

export interface ResolveContext {
  source: RegistrySource;
  /** The verified package of a published version (`downloadVerified`); called once per version. */
  fetch: (version: RegistryVersion) => Promise<LoadedPackage>;
  installed: (name: string) => Promise<InstalledPackageRecord | null>;
  installedAll: () => Promise<InstalledPackageRecord[]>;
}

export interface Resolution {
  /** The packages to plan, by name: every root, and each dependency that is not reused. */
  packages: Map<string, LoadedPackage>;
  /** Dependencies whose installed version satisfies every constraint on them. */
  reused: Set<string>;
}

interface Choice {
  version: string;
  /** null: the installed version is reused. */
  pkg: LoadedPackage | null;
  dependencies: Array<[string, string]>;
  label: string;
}

type Failure = { kind: 'unknown'; requirements: Requirement[] } | { kind: 'unsatisfied'; requirements: Requirement[]; versions: RegistryVersion[] };

/** A resolution that keeps changing its picks is stopped here (never seen with real graphs). */
const MAX_PICKS = 1000;

/**
 * Resolves `roots` and their whole dependency graph against the registry (docs/catalog.md
 * "Resolution"): one version per name satisfying every constraint on it, wherever it comes from:
 * the request, any package picked for this install, and installed packages that depend on it.
 *
 * Iterate to a fixpoint: a name is (re)picked whenever the constraints on it change. A
 * dependency whose installed version satisfies them all is reused; otherwise (and always for a
 * root) the highest non-yanked version satisfying them all is picked, its archive fetched and
 * verified, and its own dependencies (`[dependencies]` plus a workflow's `agents_required`,
 * read from the verified manifest) become constraints in turn. A re-pick withdraws the
 * constraints of the version it replaces. There is no search into lower versions of an already
 * picked package to escape a conflict: the conflict is reported, naming each constraint and who
 * imposed it, and the operator pins a version. Pre-releases are only picked by a constraint that
 * names a pre-release (`satisfies`).
 */
export async function resolveFromRegistry(roots: readonly RegistryRoot[], ctx: ResolveContext): Promise<Resolution> {
  const versionLists = new Map<string, Promise<RegistryVersion[] | null>>();
  const fetched = new Map<string, Promise<LoadedPackage>>();
  const installedRecords = new Map((await ctx.installedAll()).map((r) => [r.name, r]));
  const rootNames = new Set(roots.map((r) => r.name));
  const chosen = new Map<string, Choice>();
  const failures = new Map<string, Failure>();

  const versionsOf = (name: string) => cached(versionLists, name, () => ctx.source.versions(name));
  const fetchOnce = (v: RegistryVersion) => cached(fetched, `${v.name}@${v.version}`, () => ctx.fetch(v));

  const requirementsOn = (name: string): Requirement[] => {
    const out: Requirement[] = roots.filter((r) => r.name === name).map(({ constraint, needed_by }) => ({ constraint, needed_by }));
    for (const choice of chosen.values())
      for (const [dep, constraint] of choice.dependencies) if (dep === name) out.push({ constraint, needed_by: choice.label });
    // Installed packages this install leaves as they are still need their dependencies satisfied.
    for (const record of installedRecords.values()) {
      if (chosen.has(record.name) || rootNames.has(record.name) || failures.has(record.name)) continue;
      for (const [dep, constraint] of recordDependencies(record))
        if (dep === name) out.push({ constraint, needed_by: `installed ${record.name} ${record.version}` });
    }
    return out;
  };

  const pick = async (name: string): Promise<Choice | Failure | null> => {
    const requirements = requirementsOn(name);
    if (requirements.length === 0) return null;
    const installed = await ctx.installed(name);
    if (!rootNames.has(name) && installed !== null && requirements.every((r) => satisfies(installed.version, r.constraint)))
      return { version: installed.version, pkg: null, dependencies: recordDependencies(installed), label: `installed ${name} ${installed.version}` };
    const versions = await versionsOf(name);
    if (versions === null) return { kind: 'unknown', requirements };
    const best = versions
      .filter((v) => !v.yanked && requirements.every((r) => satisfies(v.version, r.constraint)))
      .sort((a, b) => compareVersions(b.version, a.version))[0];
    if (best === undefined) return { kind: 'unsatisfied', requirements, versions };
    const previous = chosen.get(name);
    if (previous !== undefined && previous.pkg !== null && previous.version === best.version) return previous;
    const pkg = await fetchOnce(best);
    return { version: best.version, pkg, dependencies: dependenciesOf(pkg), label: `${name} ${best.version}` };
  };

  const dirty = new Set(rootNames);
  for (let picks = 0; dirty.size > 0; picks++) {
    if (picks >= MAX_PICKS)
      throw Errors.catalog(`resolving ${[...rootNames].join(', ')} did not settle after ${MAX_PICKS} picks; pin versions of its dependencies`);
    const name = dirty.values().next().value as string;
    dirty.delete(name);
    const before = chosen.get(name);
    const outcome = await pick(name);
    chosen.delete(name);
    failures.delete(name);
    if (outcome !== null && 'kind' in outcome) failures.set(name, outcome);
    else if (outcome !== null) chosen.set(name, outcome);
    const after = chosen.get(name);
    if (before?.version === after?.version && (before?.pkg === null) === (after?.pkg === null)) continue;
    // Whose constraints changed: the dependencies of the old pick, of the new one, and of the
    // installed version (whose constraints count only while the name is not picked).
    const record = installedRecords.get(name);
    for (const [dep] of [...(before?.dependencies ?? []), ...(after?.dependencies ?? []), ...(record ? recordDependencies(record) : [])])
      dirty.add(dep);
  }

  if (failures.size > 0) throw failureError(failures, rootNames, ctx.source.url);
  const resolution: Resolution = { packages: new Map(), reused: new Set() };
  for (const [name, choice] of chosen) {
    if (choice.pkg === null) resolution.reused.add(name);
    else resolution.packages.set(name, choice.pkg);
  }
  return resolution;
}

/** The promise of `key`'s load, made once per map. */
export function cached<T>(map: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let value = map.get(key);
  if (value === undefined) {
    value = load();
    map.set(key, value);
  }
  return value;
}

function recordDependencies(record: InstalledPackageRecord): Array<[string, string]> {
  return dependenciesOf({ manifest: record.manifest, payload: record.payload as PackagePayload });
}

/**
 * The error of a resolution that failed, most specific first: a requested name the registry does
 * not know (404 NotFound), a conflict or a yanked pin (CatalogError), else every missing
 * dependency at once (MissingDependency, as for installs from a path).
 */
function failureError(failures: ReadonlyMap<string, Failure>, roots: ReadonlySet<string>, registry: string): Error {
  const unknownRoot = [...failures].find(([name, f]) => f.kind === 'unknown' && roots.has(name));
  if (unknownRoot !== undefined) {
    const [name] = unknownRoot;
    return Errors.notInRegistry('package', name, registry);
  }
  for (const [name, failure] of failures) {
    if (failure.kind !== 'unsatisfied') continue;
    const yanked = failure.versions
      .filter((v) => v.yanked && failure.requirements.every((r) => satisfies(v.version, r.constraint)))
      .sort((a, b) => compareVersions(b.version, a.version))[0];
    if (yanked !== undefined) return yankedError(name, failure.requirements, yanked);
    if (failure.requirements.length > 1 || roots.has(name)) return conflictError(name, failure.requirements, failure.versions);
  }
  const missing = [...failures].map(([name, failure]) => ({
    name,
    constraint: failure.requirements.map((r) => r.constraint).join(', '),
    needed_by: failure.requirements.map((r) => r.needed_by).join(', '),
    reason: failure.kind === 'unknown' ? `not in the registry ${registry}` : `no published version satisfies it (${published(failure.versions)})`,
  }));
  return Errors.missingDependency(
    `missing dependency: ${missing.map((m) => `${m.name} ${m.constraint} (needed by ${m.needed_by}: ${m.reason})`).join('; ')}; nothing was installed`,
    { missing, registry },
  );
}

function yankedError(name: string, requirements: readonly Requirement[], yanked: RegistryVersion): Error {
  const reason = yanked.yank === null ? '' : `: ${yanked.yank.reason}`;
  return Errors.catalog(
    `${name} ${describe(requirements)}: version ${yanked.version} is yanked${yanked.yank?.security === true ? ' for a security reason' : ''}${reason}; yanked versions are not installed, ask for another version; nothing was installed`,
    { name, version: yanked.version, yank: yanked.yank, constraints: requirements },
  );
}

function conflictError(name: string, requirements: readonly Requirement[], versions: readonly RegistryVersion[]): Error {
  const all = requirements.length === 1 ? 'it' : requirements.length === 2 ? 'both' : 'all of them';
  return Errors.catalog(`${name}: ${describe(requirements)}: no version satisfies ${all} (${published(versions)}); nothing was installed`, {
    name,
    constraints: requirements,
    published: versions.filter((v) => !v.yanked).map((v) => v.version),
  });
}

function describe(requirements: readonly Requirement[]): string {
  const parts = requirements.map((r) => `${r.constraint} (needed by ${r.needed_by})`);
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1] ?? ''}`;
}

function published(versions: readonly RegistryVersion[]): string {
  const usable = versions.filter((v) => !v.yanked).map((v) => v.version);
  return usable.length === 0 ? 'no version is published' : `published: ${usable.join(', ')}`;
}
