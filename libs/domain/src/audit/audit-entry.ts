import type { AuditCategory } from '@agent-platform/contracts';
import type { AuditCheckpoint } from './audit-checkpoint.ts';

/** Audit categories (the spec leaves them open; docs/audit.md lists them). Wire values: contracts. */
export { AUDIT_CATEGORIES, type AuditCategory } from '@agent-platform/contracts';

/** What a caller hands to `AuditTrail.record`. */
export interface AuditRecordInput {
  category: AuditCategory;
  identity: string;
  role: string;
  /** e.g. `POST /auth/keys` or `platform.boot`. */
  action: string;
  target: string;
  /** e.g. `success`, `failure`, or an HTTP status. */
  result: string;
  metadata?: Record<string, unknown> | null;
}

/** Audit entry as returned by GET /security/audit (spec §Resources "Audit entry"). */
export interface AuditEntry {
  id: number;
  seq: number;
  timestamp: string;
  category: AuditCategory;
  identity: string;
  role: string;
  action: string;
  target: string;
  result: string;
  hash: string;
  metadata: Record<string, unknown> | null;
}

export interface AuditQuery {
  limit: number;
  category?: string;
  actor?: string;
  /** ISO 8601 lower bound, inclusive. */
  since?: string;
}

/** GET /security/verify while audit is enabled: the result of walking the whole chain. */
export interface VerifyReport {
  valid: boolean;
  entry_count: number;
  chain_anchor: string;
  tip_hash: string | null;
  algorithm: 'sha256';
  integrity_covers: string[];
  integrity_excludes: string[];
  verification_note: string;
  /** Present when invalid: the first entry whose hash or link does not check out. */
  first_invalid_seq?: number;
  first_invalid_reason?: string;
  /** The first seq this walk re-hashed: 1 for a full walk, else just after the verified prefix. */
  verified_from_seq: number;
  /** Entries this walk re-hashed. */
  checked_entries: number;
  /** How the latest external checkpoint was checked (docs/audit.md "Checkpoints"). */
  checkpoint_status?: 'not_configured' | 'none_written' | 'verified' | 'failed';
  /** The latest checkpoint the chain was checked against; null when none was checked. */
  checkpoint?: (AuditCheckpoint & { sink: string; signature_valid: boolean }) | null;
  /** Why `valid` is false: the chain break or the checkpoint failure. */
  reason?: string;
  /** The seqs still in the live store (docs/retention.md); absent while no archive is configured. */
  live?: { from_seq: number | null; to_seq: number | null };
  /** The archived part of the chain in the checkpoint sink (docs/retention.md "How verify holds"). */
  archive?: ArchiveReport;
}

/** What verify found in the audit archive. */
export interface ArchiveReport {
  /** none: nothing archived yet; verified: the manifest and the segments checked; failed: see reason. */
  status: 'none' | 'verified' | 'failed';
  sink: string;
  segments: number;
  from_seq: number | null;
  to_seq: number | null;
  /** Segments whose objects this call read back and re-verified (all of them with full=true). */
  checked_segments: number;
  reason?: string;
}

/** GET /security/verify while audit is disabled (spec §Security: `valid` null, never an error). */
export interface AuditDisabledReport {
  valid: null;
  status: 'disabled';
  reason: string;
}

/**
 * The tamper-evident audit trail (spec §Security, audit and vault). Entries form a sha256 hash
 * chain over length-prefixed core fields; appends are serialized by the store's append log, so
 * concurrent requests never fork the chain.
 */
export interface AuditTrail {
  readonly enabled: boolean;
  /**
   * Appends one entry (null while disabled). Metadata goes through `sanitizeMetadata` first, so
   * secret-looking keys never reach the trail. Safe to call concurrently from any number of
   * requests: the store serializes appends and each entry's hash is built from the true tip.
   */
  record(input: AuditRecordInput): Promise<AuditEntry | null>;
  /** Newest first. ValidationError for an unknown category or a `since` that is not ISO 8601. */
  query(query: AuditQuery): Promise<AuditEntry[]>;
  /**
   * Walks the chain in batches, yielding to the event loop between them; a broken chain is a
   * report with `valid: false`, not a throw. Starts after the prefix an earlier walk of this
   * process verified unless `full`; concurrent calls share one walk.
   */
  verify(options?: { full?: boolean }): Promise<VerifyReport | AuditDisabledReport>;
  count(): Promise<number>;
  /**
   * Forgets the prefix earlier walks verified, so the next verify walks the whole chain: after a
   * restore replaced the chain (docs/backup.md), the remembered entry is another chain's.
   */
  forgetVerified(): void;
}
