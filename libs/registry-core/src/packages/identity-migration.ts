import { StoreDuplicateError, type Collection, type Doc, type Store } from '@agent-platform/store';
import { createIssuerStore } from '../auth/issuer-store.ts';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { ANONYMOUS_IDENTITY, keyIdentity, tokenIdentity } from '../auth/registry-identity.ts';
import {
  QUALIFIED_IDENTITIES,
  registryRecords,
  type IdentityMigrationRecord,
  type RegistryHistoryRecord,
  type RegistryRecords,
} from '../registry-records.ts';

const MIGRATION_ID = 'qualified-identities';
const PAGE = 500;

/** A bare identity's qualified form, or null when the rule cannot tell whose it is. */
export type LegacyIdentityRule = (bare: string) => string | null;

/**
 * The rule for a bare identity written before identities were qualified (docs/registry.md
 * "Legacy identities"), decided by the registry keys and issuers that existed when
 * the migration first ran:
 * - `anonymous` (auth mode disabled) stays `anonymous`;
 * - the name of a registry key (revoked ones too) while no issuer is registered: `key:<name>`;
 * - a name of no key while exactly one issuer is registered: `<issuer>#<name>`;
 * - anything else (a key name while an issuer is registered too: the very confusion this
 *   removes; no key and no issuer, or several issuers): unresolved. An unresolved owner is
 *   dropped (granted to nobody, logged); elsewhere the bare name stays as a record of who it was.
 */
export function legacyIdentityRule(decided: Pick<IdentityMigrationRecord, 'key_names' | 'issuers'>): LegacyIdentityRule {
  const keys = new Set(decided.key_names);
  const [onlyIssuer] = decided.issuers;
  return (bare) => {
    if (bare === ANONYMOUS_IDENTITY) return bare;
    if (keys.has(bare)) return decided.issuers.length === 0 ? keyIdentity(bare) : null;
    return decided.issuers.length === 1 && onlyIssuer !== undefined ? tokenIdentity(onlyIssuer, bare) : null;
  };
}

export interface IdentityMigrationDeps {
  store: Store;
  clock: { now(): Date };
  logger: {
    info(object: Record<string, unknown>, message: string): void;
    warn(object: Record<string, unknown>, message: string): void;
  };
}

export interface IdentityMigrationReport {
  packages: number;
  versions: number;
  collections: number;
  /** Owners the rule could not resolve, dropped from their package or collection. */
  unresolved: Array<{ kind: 'package' | 'collection'; name: string; identity: string }>;
}

/**
 * Rewrites every package, version and collection record written with bare identities, once per
 * store, at registry start (before the listener opens). Crash- and race-safe: the rule's inputs
 * are stored first (the first process to insert them wins; the others and a re-run use them),
 * each record is rewritten by one atomic update that skips a record already marked
 * QUALIFIED_IDENTITIES, and the migration is marked finished last. Null when it had already run.
 */
export async function migrateLegacyIdentities(deps: IdentityMigrationDeps): Promise<IdentityMigrationReport | null> {
  const records = registryRecords(deps.store);
  const decided = await decide(deps, records);
  if (decided.finished_at !== null) return null;
  const rule = legacyIdentityRule(decided);
  const report: IdentityMigrationReport = { packages: 0, versions: 0, collections: 0, unresolved: [] };
  const qualifyOwners = (kind: 'package' | 'collection', name: string, owners: readonly string[]): string[] => {
    const kept: string[] = [];
    for (const owner of owners) {
      const qualified = rule(owner);
      // `update` may call this more than once for one record: report each owner once.
      if (qualified === null && !report.unresolved.some((u) => u.kind === kind && u.name === name && u.identity === owner))
        report.unresolved.push({ kind, name, identity: owner });
      else if (qualified !== null && !kept.includes(qualified)) kept.push(qualified);
    }
    return kept;
  };
  const named = (bare: string) => rule(bare) ?? bare;

  report.packages = await rewriteLegacy(records.packages, (doc) => ({ ...doc, owners: qualifyOwners('package', doc.name, doc.owners) }));
  report.versions = await rewriteLegacy(records.versions, (doc) => ({
    ...doc,
    published_by: named(doc.published_by),
    yank: doc.yank === null ? null : { ...doc.yank, yanked_by: named(doc.yank.yanked_by) },
  }));
  report.collections = await rewriteLegacy(records.collections, (doc) => ({ ...doc, owners: qualifyOwners('collection', doc.name, doc.owners) }));

  for (const { kind, name, identity } of report.unresolved)
    deps.logger.warn(
      { kind, name, identity: identity.slice(0, 120) },
      `legacy owner '${identity.slice(0, 120)}' of ${kind} '${name}' could not be qualified and was removed: a registry-admin sets the owners again (PUT /packages/{name}/owners)`,
    );
  await records.migrations.update(MIGRATION_ID, (current) =>
    current === null || current.doc.finished_at !== null ? null : { ...current.doc, finished_at: deps.clock.now().toISOString() },
  );
  if (report.packages + report.versions + report.collections > 0)
    deps.logger.info(
      { packages: report.packages, versions: report.versions, collections: report.collections, unresolved: report.unresolved.length },
      'registry identities qualified (key:<name>, <issuer>#<sub>)',
    );
  return report;
}

/** The migration's stored inputs: the existing ones, or a snapshot of the keys and issuers now. */
async function decide(deps: IdentityMigrationDeps, records: RegistryRecords): Promise<IdentityMigrationRecord> {
  const existing = await records.migrations.get(MIGRATION_ID);
  if (existing !== null) return existing.doc;
  const keys = await createRegistryKeyService(deps).list();
  const issuers = await createIssuerStore(deps).list();
  const record: IdentityMigrationRecord = {
    id: MIGRATION_ID,
    started_at: deps.clock.now().toISOString(),
    finished_at: null,
    key_names: [...new Set(keys.map((k) => k.name))].sort(),
    issuers: issuers.map((i) => i.issuer).sort(),
  };
  try {
    return (await records.migrations.insert(record)).doc;
  } catch (error) {
    if (!(error instanceof StoreDuplicateError)) throw error;
    const winner = await records.migrations.get(MIGRATION_ID);
    if (winner === null) throw error;
    return winner.doc;
  }
}

/** Rewrites each record not yet marked; resolves to how many this call rewrote. */
async function rewriteLegacy<T extends Doc & { identities?: typeof QUALIFIED_IDENTITIES }>(
  collection: Collection<T>,
  qualify: (doc: T) => T,
): Promise<number> {
  let rewritten = 0;
  for (let offset = 0; ; offset += PAGE) {
    const page = await collection.find({ orderBy: { field: 'id' }, limit: PAGE, offset });
    for (const { doc } of page) {
      if (doc.identities === QUALIFIED_IDENTITIES) continue;
      let changed = false;
      await collection.update(doc.id, (current) => {
        changed = current !== null && current.doc.identities !== QUALIFIED_IDENTITIES;
        return changed && current !== null ? { ...qualify(current.doc), identities: QUALIFIED_IDENTITIES } : null;
      });
      if (changed) rewritten += 1;
    }
    if (page.length < PAGE) return rewritten;
  }
}

/**
 * History lines are an append log, never edited: a line written before the migration is shown
 * through the migration's rule (an unresolved owner left out, an unresolved actor as written).
 */
export async function historyReader(records: RegistryRecords): Promise<<E extends RegistryHistoryRecord>(entry: E) => E> {
  const decided = await records.migrations.get(MIGRATION_ID);
  if (decided === null) return (entry) => entry;
  const rule = legacyIdentityRule(decided.doc);
  return (entry) => {
    if (entry.identities === QUALIFIED_IDENTITIES) return entry;
    const mapped = { ...entry, identity: rule(entry.identity) ?? entry.identity };
    if (entry.owners !== undefined) mapped.owners = entry.owners.map(rule).filter((o): o is string => o !== null);
    return mapped;
  };
}
