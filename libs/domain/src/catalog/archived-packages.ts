import { isDeepStrictEqual } from 'node:util';
import type { LoadedPackage } from '@agent-platform/packages';
import type { Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import { standingRevocations } from '../revocations/revocation-guard.ts';
import { revocationId, revokedPackage } from '../revocations/revocation-records.ts';
import { checkPlannedSkills, type SkillCheckDeps } from '../skills/skill-install-check.ts';
import { catalogCollections, type InstalledPackageRecord } from './catalog-records.ts';
import type { PlannedPackage } from './install-plan.ts';
import { integrationFromPackage, skillFromPackage } from './package-entities.ts';
import { requireRegistry, type CatalogRegistryDeps } from './registry-install.ts';
import { downloadVerified } from './verified-download.ts';

export interface ArchivedPackageDeps {
  /** The live store: its standing revocations apply to what a restore would bring back. */
  live: Store;
  /** The registry and its trusted keys (`[catalog]`), as installs by name use them. */
  registry?: CatalogRegistryDeps;
  skills?: SkillCheckDeps;
}

/**
 * The install checks a backup's packages pass before a restore changes anything (docs/backup.md
 * "Packages in an archive"), with the functions an install uses:
 *
 * - every archive: no package is a standing revocation here (the CatalogError of an install);
 * - a foreign archive (another vault key) also: every package is a registry package whose exact
 *   version downloads and verifies with `[catalog] trusted_keys` (`downloadVerified`), its record
 *   holds what that signed package holds, every integration and skill record is what the signed
 *   package makes, and the skills pass the install's Starlark check. A package installed from a
 *   directory carries no signature, so a foreign archive holding one is refused.
 */
export async function checkArchivedPackages(
  archived: Store,
  deps: ArchivedPackageDeps,
  foreign: boolean,
): Promise<void> {
  const records = catalogCollections(archived);
  const packages = (await records.packages.find()).map(({ doc }) => doc);
  const standing = await standingRevocations(deps.live);
  const revoked = packages.flatMap((p) => standing.get(revocationId(p.name, p.version)) ?? []);
  if (revoked.length > 0) throw Errors.packageRevoked(revoked.map(revokedPackage));
  if (!foreign) return;
  const unsigned = packages.filter((p) => (p.source ?? 'path') !== 'registry').map((p) => p.name);
  if (unsigned.length > 0)
    throw refuse(
      `its packages ${unsigned.join(', ')} were installed from a directory and carry no registry signature; install them here instead`,
      { packages: unsigned },
    );
  const verified = new Map<string, LoadedPackage>();
  if (packages.length > 0) {
    const access = requireRegistry(deps.registry, 'restoring a foreign archive that holds packages');
    for (const record of packages) verified.set(record.name, await verifiedPackage(record, access));
  }
  await sameEntities(records, verified);
  const plan: PlannedPackage[] = [...verified.entries()].map(([name, pkg]) => ({
    pkg,
    name,
    version: pkg.manifest.package.version,
    action: 'install',
    previous: null,
    dependencies: [],
    origin: 'registry',
  }));
  if (deps.skills !== undefined) await checkPlannedSkills(plan, deps.skills);
}

function refuse(message: string, details: Record<string, unknown> = {}) {
  return Errors.catalog(`the foreign archive is refused: ${message}; nothing was restored`, details);
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null)) as unknown;

async function verifiedPackage(
  record: InstalledPackageRecord,
  access: ReturnType<typeof requireRegistry>,
): Promise<LoadedPackage> {
  const version = await access.source.version(record.name, record.version);
  if (version === null)
    throw refuse(`package ${record.name} ${record.version} is not in the registry ${access.source.url}`, {
      name: record.name,
    });
  const pkg = await downloadVerified(version, access, access.platformVersion);
  const same =
    pkg.content_hash === record.content_hash &&
    isDeepStrictEqual(plain(pkg.payload), plain(record.payload)) &&
    isDeepStrictEqual(plain(pkg.manifest), plain(record.manifest));
  if (!same)
    throw refuse(`package ${record.name} ${record.version} differs from what the registry signed`, {
      name: record.name,
    });
  return pkg;
}

/** Integrations and skills are what runs: each must be exactly what its signed package makes. */
async function sameEntities(
  records: ReturnType<typeof catalogCollections>,
  verified: ReadonlyMap<string, LoadedPackage>,
): Promise<void> {
  for (const { doc } of await records.integrations.find()) {
    const pkg = verified.get(doc.name);
    const payload = pkg?.payload;
    const expected =
      pkg !== undefined && (payload?.file === 'mcp.json' || payload?.file === 'adapter.json')
        ? integrationFromPackage(
            pkg.manifest.package,
            {
              implements: pkg.manifest.implements,
              idempotent_keys: pkg.manifest.standards?.idempotent_keys === true,
            },
            payload,
            doc,
            doc.updated_at,
          )
        : null;
    if (expected === null || !isDeepStrictEqual(plain(expected), plain(doc)))
      throw refuse(`integration ${doc.name} is not what a signed package of it makes`, { name: doc.name });
  }
  for (const { doc } of await records.skills.find()) {
    const pkg = verified.get(doc.name);
    const payload = pkg?.payload;
    const expected =
      pkg !== undefined && payload?.file === 'SKILL.md'
        ? skillFromPackage(pkg.manifest.package, payload.data, doc, doc.updated_at)
        : null;
    if (expected === null || !isDeepStrictEqual(plain(expected), plain(doc)))
      throw refuse(`skill ${doc.name} is not what a signed package of it makes`, { name: doc.name });
  }
}
