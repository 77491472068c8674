import type { CollectionManifest, RegistryCollection } from '@agent-platform/contracts';
import { COLLECTION_FILE, compareVersions } from '@agent-platform/packages';
import { StoreConflictError, StoreDuplicateError, type Store } from '@agent-platform/store';
import { QUALIFIED_IDENTITIES, registryRecords, type RegistryCollectionRecord } from '../registry-records.ts';
import { checkCollection } from './collection-check.ts';
import { refused, type CollectionCaller, type CollectionOutcome } from './collection-outcome.ts';

export interface CollectionServiceDeps {
  store: Store;
  now: () => Date;
}

/** Collections of the registry (GET/POST /collections, GET/PUT/DELETE /collections/{name}). */
export interface CollectionService {
  list(): Promise<RegistryCollection[]>;
  get(name: string): Promise<RegistryCollection | null>;
  /** Publishes a new collection from its COLLECTION.toml; the caller becomes its owner. */
  publish(text: string, caller: CollectionCaller): Promise<CollectionOutcome<RegistryCollection>>;
  /** Replaces `name` by a COLLECTION.toml of the same name and a higher version. Owners or registry-admin. */
  replace(name: string, text: string, caller: CollectionCaller): Promise<CollectionOutcome<RegistryCollection>>;
  /** Owners or registry-admin. */
  remove(name: string, caller: CollectionCaller): Promise<CollectionOutcome<null>>;
}

export function createCollectionService(deps: CollectionServiceDeps): CollectionService {
  const { collections, versions } = registryRecords(deps.store);

  // Identities are qualified (`key:<name>`, `<issuer>#<sub>`: docs/registry-auth.md "Identities"): equal strings, same caller.
  const mayChange = (record: RegistryCollectionRecord, caller: CollectionCaller) =>
    caller.role === 'registry-admin' || record.owners.includes(caller.identity);

  return {
    async list() {
      const all = await collections.find({ orderBy: { field: 'name' } });
      return all.map(({ doc }) => viewOf(doc));
    },

    async get(name) {
      const found = await collections.get(name);
      return found === null ? null : viewOf(found.doc);
    },

    async publish(text, caller) {
      const checked = await checkCollection(text, versions);
      if ('problems' in checked) return refused({ kind: 'invalid', name: null, problems: checked.problems });
      const at = deps.now().toISOString();
      const record = recordOf(checked.collection, [caller.identity], at, at);
      try {
        await collections.insert(record);
      } catch (error) {
        if (error instanceof StoreDuplicateError) return refused({ kind: 'duplicate', name: record.name });
        throw error;
      }
      return { ok: true, value: viewOf(record) };
    },

    async replace(name, text, caller) {
      const found = await collections.get(name);
      if (found === null) return refused({ kind: 'not-found', name });
      if (!mayChange(found.doc, caller)) return refused({ kind: 'forbidden', name, identity: caller.identity });
      const checked = await checkCollection(text, versions);
      if ('problems' in checked) return refused({ kind: 'invalid', name, problems: checked.problems });
      const next = checked.collection;
      if (next.name !== name)
        return refused({ kind: 'invalid', name, problems: [problem('name', 'collection-name', `must be '${name}', the collection being replaced (got '${next.name}')`)] });
      if (compareVersions(next.version, found.doc.version) <= 0) {
        return refused({
          kind: 'invalid',
          name,
          problems: [problem('version', 'collection-version', `must be higher than the published ${found.doc.version} (got ${next.version})`)],
        });
      }
      const record = recordOf(next, found.doc.owners, found.doc.created_at, deps.now().toISOString());
      try {
        await collections.replace(record, found.version);
      } catch (error) {
        if (error instanceof StoreConflictError) return refused({ kind: 'conflict', name });
        throw error;
      }
      return { ok: true, value: viewOf(record) };
    },

    async remove(name, caller) {
      const found = await collections.get(name);
      if (found === null) return refused({ kind: 'not-found', name });
      if (!mayChange(found.doc, caller)) return refused({ kind: 'forbidden', name, identity: caller.identity });
      try {
        await collections.delete(name, found.version);
      } catch (error) {
        if (error instanceof StoreConflictError) return refused({ kind: 'conflict', name });
        throw error;
      }
      return { ok: true, value: null };
    },
  };
}

function problem(field: string, rule: string, message: string) {
  return { file: COLLECTION_FILE, field, rule, message };
}

function recordOf(manifest: CollectionManifest, owners: string[], createdAt: string, updatedAt: string): RegistryCollectionRecord {
  const record: RegistryCollectionRecord = {
    id: manifest.name,
    name: manifest.name,
    display_name: manifest.display_name,
    description: manifest.description,
    version: manifest.version,
    license: manifest.license,
    featured: manifest.featured,
    tags: manifest.tags,
    metadata: { categories: manifest.metadata.categories, regions: manifest.metadata.regions },
    packages: manifest.packages.map(({ name, version, package_type, is_dependency }) => ({ name, version, package_type, is_dependency })),
    owners,
    created_at: createdAt,
    updated_at: updatedAt,
    identities: QUALIFIED_IDENTITIES,
  };
  if (manifest.min_platform_version !== undefined) record.min_platform_version = manifest.min_platform_version;
  if (manifest.icon !== undefined) record.icon = manifest.icon;
  if (manifest.author !== undefined) record.author = manifest.author;
  return record;
}

function viewOf(record: RegistryCollectionRecord): RegistryCollection {
  const { id: _id, identities: _identities, ...view } = record;
  return view;
}
