import type { IntegrityAnchor, PlatformConfig } from '@agent-platform/contracts';
import type {
  ApiKeyView,
  ArchiveReport,
  InstalledPackageRecord,
  LicenceState,
  VaultEntry,
} from '@agent-platform/domain';
import type { ScannedEntry } from './evidence-kind.ts';
import type { EvidenceSource, RunCounts } from './evidence-source.ts';

/**
 * The platform's state as one report sees it: read once per report (a store read is shared by
 * every check that needs it) and never reused by the next report, so every status is fresh.
 */
export interface EvidenceFacts {
  readonly now: Date;
  readonly config: PlatformConfig;
  readonly licence: LicenceState;
  readonly auditEnabled: boolean;
  /** The verify result the report carries as its integrity anchor. */
  readonly integrity: IntegrityAnchor;
  /** What that verify found in the audit archive (docs/retention.md); null without one or with audit off. */
  readonly archive: ArchiveReport | null;
  /** The oldest entry the trail holds (null: empty or disabled), read before the scan. */
  readonly oldestEntry: ScannedEntry | null;
  keys(): Promise<ApiKeyView[]>;
  packages(): Promise<InstalledPackageRecord[]>;
  vault(): Promise<VaultEntry[]>;
  runs(): Promise<RunCounts>;
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | null = null;
  return () => (value ??= load());
}

export function createEvidenceFacts(
  source: EvidenceSource,
  input: {
    now: Date;
    integrity: IntegrityAnchor;
    archive: ArchiveReport | null;
    oldestEntry: ScannedEntry | null;
  },
): EvidenceFacts {
  return {
    now: input.now,
    config: source.config(),
    licence: source.licence(),
    auditEnabled: source.auditEnabled,
    integrity: input.integrity,
    archive: input.archive,
    oldestEntry: input.oldestEntry,
    keys: once(() => source.keys()),
    packages: once(() => source.packages()),
    vault: once(() => source.vault()),
    runs: once(() => source.runs()),
  };
}
