import type { CollectionManifest, PackageManifest, PackageProblem, RegistryVersion } from '@agent-platform/contracts';
import { checkCollectionClosure, COLLECTION_FILE, validateCollection } from '@agent-platform/packages';
import type { Collection } from '@agent-platform/store';
import { versionId, type RegistryVersionRecord } from '../registry-records.ts';
import { unknownCategories } from '../taxonomy/taxonomy.ts';

/**
 * Everything the registry checks in a COLLECTION.toml before it stores it, every problem at
 * once (docs/registry-search.md "Collections"):
 * 1. the file itself (libs/packages `validateCollection`: TOML, fields, entries pinned at exact
 *    versions); nothing else is checked when it fails;
 * 2. `[metadata] categories` are in the taxonomy (`unknown-category`);
 * 3. each `[[packages]]` entry is a published (`unpublished-package`), non-yanked
 *    (`yanked-package`) name@version of its `package_type` (`package-type-mismatch`);
 * 4. the closure rule (libs/packages `checkCollectionClosure`): every dependency of every entry,
 *    as its published version declares it, is listed at a version its constraint accepts
 *    (`missing-dependency`, `dependency-version`). Checking each entry's direct dependencies
 *    against the listed versions checks the transitive closure: a dependency's own
 *    dependencies are checked as an entry of their own.
 */
export async function checkCollection(
  text: string,
  versions: Collection<RegistryVersionRecord>,
): Promise<{ collection: CollectionManifest } | { problems: PackageProblem[] }> {
  const report = validateCollection(text);
  if (!report.ok || report.collection === undefined) return { problems: report.problems };
  const collection = report.collection;
  const problems: PackageProblem[] = [];
  const add = (field: string, rule: string, message: string) => problems.push({ file: COLLECTION_FILE, field, rule, message });
  for (const category of unknownCategories(collection.metadata.categories)) {
    add(`metadata.categories[${collection.metadata.categories.indexOf(category)}]`, 'unknown-category', `'${category}' is not in the registry's taxonomy (GET /taxonomy)`);
  }
  const manifests = new Map<string, PackageManifest>();
  for (const [i, entry] of collection.packages.entries()) {
    const found = await versions.get(versionId(entry.name, entry.version));
    if (found === null) {
      add(`packages[${i}].version`, 'unpublished-package', `'${entry.name}@${entry.version}' is not published in this registry`);
      continue;
    }
    if (found.doc.yanked) {
      const reason = found.doc.yank?.reason;
      add(`packages[${i}].version`, 'yanked-package', `'${entry.name}@${entry.version}' is yanked${reason === undefined ? '' : `: ${reason}`}`);
    }
    manifests.set(entry.name, manifestOf(found.doc));
  }
  // Entries with no published version were reported above, more precisely than `unknown-package`.
  problems.push(...checkCollectionClosure(collection, manifests).filter((p) => p.rule !== 'unknown-package'));
  return problems.length === 0 ? { collection } : { problems };
}

/** The parts of a package manifest the closure check reads, from the published version. */
function manifestOf(version: RegistryVersion): PackageManifest {
  return {
    package: {
      type: version.type,
      name: version.name,
      title: version.title,
      version: version.version,
      description: version.description,
      license: version.license,
      min_platform_version: version.min_platform_version,
      metadata: { keywords: version.keywords, categories: version.categories, regions: version.regions },
    },
    dependencies: version.dependencies,
    implements: {},
  };
}
