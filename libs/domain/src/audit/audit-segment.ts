import type { AppendLog } from '@agent-platform/store';
import type { StoredAuditEntry } from './audit-chain.ts';
import { checkpointSignatureValid, matchCheckpoint, type SignedCheckpoint } from './audit-checkpoint.ts';
import { CHAIN_ANCHOR, chainHash } from './audit-hash.ts';

export const SEGMENT_FORMAT = 'agent-platform-audit-segment/1';

/** One exported entry: every hashed field, its link and its hash. */
export type SegmentEntry = StoredAuditEntry & { seq: number };

/**
 * A run of consecutive audit entries, exported for offline checking (`agent-platform audit
 * export`). `prev_hash` is the hash of the entry before `from_seq` (the chain anchor for seq 1).
 */
export interface AuditSegment {
  format: typeof SEGMENT_FORMAT;
  from_seq: number;
  prev_hash: string;
  entries: SegmentEntry[];
}

/** Reads entries `from`..`to` (inclusive; to = the tip when null) of the audit log into a segment. */
export async function exportSegment(log: AppendLog<StoredAuditEntry>, from: number, to: number | null): Promise<AuditSegment> {
  const entries: SegmentEntry[] = [];
  let prevHash = CHAIN_ANCHOR;
  if (from > 1) {
    const [before] = await log.scan(from - 1, 1);
    if (before === undefined || before.seq !== from - 1) throw new Error(`entry ${from - 1} (before --from) is missing`);
    prevHash = String(before.hash);
  }
  let next = from;
  for (;;) {
    const batch = await log.scan(next, 1000);
    for (const e of batch) {
      if (to !== null && e.seq > to) return { format: SEGMENT_FORMAT, from_seq: from, prev_hash: prevHash, entries };
      const { seq, prev_hash, hash, timestamp, category, identity, role, action, target, result, metadata } = e;
      entries.push({ seq, prev_hash, hash, timestamp, category, identity, role, action, target, result, metadata });
      next = e.seq + 1;
    }
    if (batch.length < 1000) return { format: SEGMENT_FORMAT, from_seq: from, prev_hash: prevHash, entries };
  }
}

export interface SegmentVerdict {
  valid: boolean;
  /** Why not; absent when valid. */
  reason?: string;
  /** Entries whose hash and link were re-checked. */
  checked_entries: number;
}

/**
 * Checks a segment offline against a signed checkpoint and the platform's checkpoint public key:
 * the checkpoint's signature, every entry's hash and link (consecutive seqs from `from_seq`,
 * the first linking to `prev_hash`), and that the segment reaches the checkpoint's count with
 * its tip hash. A segment that starts after seq 1 is trusted for its `prev_hash` only as far as
 * its link: export from 1 to check the whole chain.
 */
export async function verifySegment(segment: AuditSegment, signed: SignedCheckpoint, publicKey: string): Promise<SegmentVerdict> {
  if (!checkpointSignatureValid(signed, publicKey)) return { valid: false, reason: 'checkpoint signature does not verify', checked_entries: 0 };
  if (segment.format !== SEGMENT_FORMAT || !Number.isSafeInteger(segment.from_seq) || segment.from_seq < 1 || !Array.isArray(segment.entries)) {
    return { valid: false, reason: `not an audit segment (expected format ${SEGMENT_FORMAT})`, checked_entries: 0 };
  }
  if (segment.from_seq === 1 && segment.prev_hash !== CHAIN_ANCHOR) {
    return { valid: false, reason: 'a segment from seq 1 must link to the chain anchor', checked_entries: 0 };
  }
  let prevHash = segment.prev_hash;
  let checked = 0;
  for (const [i, e] of segment.entries.entries()) {
    const expected = segment.from_seq + i;
    if (e.seq !== expected) return { valid: false, reason: `seq gap: expected seq ${expected}, found ${e.seq} (entries removed)`, checked_entries: checked };
    if (e.prev_hash !== prevHash) return { valid: false, reason: `entry ${e.seq}: broken link (prev_hash does not match the previous entry hash)`, checked_entries: checked };
    const recomputed = chainHash({
      prev_hash: prevHash,
      seq: e.seq,
      timestamp: e.timestamp,
      category: e.category,
      identity: e.identity,
      role: e.role,
      action: e.action,
      target: e.target,
      result: e.result,
      metadata: e.metadata ?? null,
    });
    if (recomputed !== e.hash) return { valid: false, reason: `entry ${e.seq}: hash mismatch (the entry was modified)`, checked_entries: checked };
    prevHash = e.hash;
    checked += 1;
  }
  const cp = signed.checkpoint;
  if (cp.tip_seq > 0 && cp.tip_seq < segment.from_seq) {
    return { valid: false, reason: `the segment starts at seq ${segment.from_seq}, after the checkpoint's tip (seq ${cp.tip_seq})`, checked_entries: checked };
  }
  const lastSeq = segment.from_seq + segment.entries.length - 1;
  const match = await matchCheckpoint(cp, {
    entryCount: lastSeq,
    hashAt: async (seq) => segment.entries[seq - segment.from_seq]?.hash ?? null,
  });
  return match.ok ? { valid: true, checked_entries: checked } : { valid: false, checked_entries: checked, ...(match.reason === undefined ? {} : { reason: match.reason }) };
}
