import type { PlatformConfig } from '@agent-platform/contracts';
import {
  catalogCollections,
  workflowRuns,
  type ApiKeyView,
  type AuditDisabledReport,
  type AuditTrail,
  type InstalledPackageRecord,
  type KeyService,
  type LicenceState,
  type StoredAuditEntry,
  type Vault,
  type VaultEntry,
  type VerifyReport,
} from '@agent-platform/domain';
import type { AppendLog, Store } from '@agent-platform/store';

/** Escalated workflow runs (docs/workflows.md): the platform's human hand-off. */
export interface RunCounts {
  total: number;
  escalated: number;
  /** Ids of escalated runs, oldest first, at most 20 (evidence pointers). */
  escalated_ids: string[];
}

/**
 * What evidence checks read: the platform's own state, through the services that own it. Every
 * read is fresh (nothing is cached between reports), so a report shows the platform as it is.
 */
export interface EvidenceSource {
  /** The running config (follows POST /config/reload). */
  config(): PlatformConfig;
  /** The licence held now (DECISIONS D3). */
  licence(): LicenceState;
  readonly auditEnabled: boolean;
  /** A full walk of the chain plus the checkpoint check (GET /security/verify?full=true). */
  verifyAudit(): Promise<VerifyReport | AuditDisabledReport>;
  /** The audit chain, read in seq order by the report's one scan. */
  auditLog(): AppendLog<StoredAuditEntry>;
  keys(): Promise<ApiKeyView[]>;
  packages(): Promise<InstalledPackageRecord[]>;
  vault(): Promise<VaultEntry[]>;
  runs(): Promise<RunCounts>;
}

export interface EvidenceSourceDeps {
  store: Store;
  audit: Pick<AuditTrail, 'enabled' | 'verify'>;
  keys: Pick<KeyService, 'list'>;
  vault: Pick<Vault, 'list'>;
  config: () => PlatformConfig;
  licence: () => LicenceState;
}

const ESCALATED_IDS = 20;

/** The evidence source over the platform's services and store (one per api process). */
export function createEvidenceSource(deps: EvidenceSourceDeps): EvidenceSource {
  const packages = catalogCollections(deps.store).packages;
  const runs = workflowRuns(deps.store);
  // The audit trail's own log (libs/domain audit-trail.ts opens it with the same name and indexes).
  const log = deps.store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });
  return {
    config: deps.config,
    licence: deps.licence,
    auditEnabled: deps.audit.enabled,
    verifyAudit: () => deps.audit.verify({ full: true }),
    auditLog: () => log,
    keys: () => deps.keys.list(),
    packages: async () =>
      (await packages.find({ orderBy: { field: 'id', direction: 'asc' } })).map((v) => v.doc),
    vault: async () =>
      [...(await deps.vault.list())].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    runs: async () => {
      const [total, escalated, first] = await Promise.all([
        runs.count(),
        runs.count({ state: 'Escalated' }),
        runs.find({
          where: { state: 'Escalated' },
          orderBy: { field: 'started_at', direction: 'asc' },
          limit: ESCALATED_IDS,
        }),
      ]);
      return { total, escalated, escalated_ids: first.map((r) => r.doc.id) };
    },
  };
}
