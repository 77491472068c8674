/** Audit categories (the spec leaves them open; docs/audit.md lists them). */
export const AUDIT_CATEGORIES = ['auth', 'access', 'keys', 'vault', 'config', 'audit', 'system', 'agents', 'request'] as const;
export type AuditCategory = (typeof AUDIT_CATEGORIES)[number];

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
}

/**
 * The tamper-evident audit trail (spec §Security, audit and vault). Entries form a sha256 hash
 * chain over length-prefixed core fields; appends are serialized by the store's append log, so
 * concurrent requests never fork the chain.
 */
export interface AuditTrail {
  readonly enabled: boolean;
  record(input: AuditRecordInput): Promise<AuditEntry | null>;
  query(query: AuditQuery): Promise<AuditEntry[]>;
  verify(): Promise<VerifyReport>;
  count(): Promise<number>;
}
