import type { AppendLog, LogEntry } from '@agent-platform/store';
import type { AuditEntry, VerifyReport } from './audit-entry.ts';
import { CHAIN_ANCHOR, CHAIN_EXCLUDES, CHAIN_FIELDS, HASH_ALGORITHM, chainHash } from './audit-hash.ts';

/**
 * One audit entry as the store keeps it. `seq` is added by the append log; `id` is not stored
 * (it is `seq`). `prev_hash` is kept so that verify can tell a rewritten entry (its own hash no
 * longer matches) from a broken link (its predecessor changed or vanished).
 */
export type StoredAuditEntry = Omit<AuditEntry, 'id' | 'seq'> & { prev_hash: string };

/** Entries read per `scan` call, so a chain of any length is verified in bounded memory. */
export const VERIFY_BATCH = 1000;

export const VERIFICATION_NOTE =
  `Each entry's hash is ${HASH_ALGORITHM} over the length-prefixed concatenation ("<utf8 byte length>:<value>") of ` +
  `${CHAIN_FIELDS.join(', ')}; metadata_hash is sha256 of the canonical JSON of metadata (keys sorted, no ` +
  `whitespace), or empty for null metadata. prev_hash is the previous entry's hash, or chain_anchor for seq 1. ` +
  `Editing, removing or reordering any entry invalidates it or the entry after it. Removing the newest ` +
  `entries cannot be detected from the chain alone: keep entry_count and tip_hash from an earlier report ` +
  `and compare. id equals seq and is not hashed. A walk starts after the entries this process already ` +
  `verified (verified_from_seq; the last of them is re-checked): an in-place edit of an older entry is found ` +
  `by GET /security/verify?full=true, which re-hashes every entry.`;

export function toAuditEntry(stored: LogEntry<StoredAuditEntry>): AuditEntry {
  return {
    id: stored.seq,
    seq: stored.seq,
    timestamp: stored.timestamp,
    category: stored.category,
    identity: stored.identity,
    role: stored.role,
    action: stored.action,
    target: stored.target,
    result: stored.result,
    hash: stored.hash,
    metadata: stored.metadata,
  };
}

interface Break {
  seq: number;
  reason: string;
}

/** The last entry a walk found valid: the next walk may start after it (`verifyChain`). */
export interface VerifiedPrefix {
  seq: number;
  hash: string;
}

/** What a walk reports, and where the verified prefix of the chain now ends. */
export interface ChainWalk {
  report: VerifyReport;
  /** The newest entry known good, or null when the chain is broken or empty. */
  verified: VerifiedPrefix | null;
}

/** Lets other work run between batches: the walk must never hold the event loop for long. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Recomputes hashes and links from `from` (an earlier walk's verified prefix) or from seq 1, to
 * the tip, in batches of `VERIFY_BATCH` with a turn of the event loop between them (a chain of any
 * length is verified in bounded memory without stalling requests). Starting from a prefix, its
 * last entry is re-hashed and must still carry the remembered hash; entries before it are not read
 * again (docs/audit.md "Verification": `full` walks catch an in-place edit of older entries).
 * Stops checking at the first bad entry: everything after it is unverifiable anyway.
 */
export async function verifyChain(log: AppendLog<StoredAuditEntry>, from: VerifiedPrefix | null = null): Promise<ChainWalk> {
  let expectedSeq = 1;
  let prevHash = CHAIN_ANCHOR;
  let found: Break | null = null;
  let checked = 0;
  let last: VerifiedPrefix | null = null;
  if (from !== null) {
    const [entry] = await log.scan(from.seq, 1);
    found = entry === undefined || entry.seq !== from.seq ? { seq: from.seq, reason: 'entry removed after it was verified' } : null;
    found ??= entry!.hash === from.hash ? checkEntry(entry!, from.seq, entry!.prev_hash) : { seq: from.seq, reason: 'hash changed after it was verified' };
    expectedSeq = from.seq + 1;
    prevHash = from.hash;
    last = found === null ? from : null;
  }
  const verifiedFrom = expectedSeq;
  while (found === null) {
    const batch = await log.scan(expectedSeq, VERIFY_BATCH);
    for (const entry of batch) {
      found = checkEntry(entry, expectedSeq, prevHash);
      if (found !== null) break;
      checked += 1;
      prevHash = entry.hash;
      last = { seq: entry.seq, hash: entry.hash };
      expectedSeq += 1;
    }
    if (batch.length < VERIFY_BATCH) break;
    await yieldToEventLoop();
  }
  const [entryCount, tip] = await Promise.all([log.count(), log.tip()]);
  const report: VerifyReport = {
    valid: found === null,
    entry_count: entryCount,
    chain_anchor: CHAIN_ANCHOR,
    tip_hash: tip === null ? null : String(tip.hash),
    algorithm: HASH_ALGORITHM,
    integrity_covers: [...CHAIN_FIELDS],
    integrity_excludes: [...CHAIN_EXCLUDES],
    verification_note: VERIFICATION_NOTE,
    verified_from_seq: verifiedFrom,
    checked_entries: checked,
  };
  if (found !== null) {
    report.first_invalid_seq = found.seq;
    report.first_invalid_reason = found.reason;
  }
  return { report, verified: found === null ? last : null };
}

function checkEntry(entry: LogEntry<StoredAuditEntry>, expectedSeq: number, prevHash: string): Break | null {
  if (entry.seq !== expectedSeq) {
    return {
      seq: entry.seq,
      reason: `seq gap: expected seq ${expectedSeq}, found ${entry.seq} (entries removed)`,
    };
  }
  if (entry.prev_hash !== prevHash) {
    return { seq: entry.seq, reason: 'broken link: prev_hash does not match the previous entry hash' };
  }
  const recomputed = chainHash({
    prev_hash: prevHash,
    seq: entry.seq,
    timestamp: text(entry.timestamp),
    category: text(entry.category),
    identity: text(entry.identity),
    role: text(entry.role),
    action: text(entry.action),
    target: text(entry.target),
    result: text(entry.result),
    metadata: entry.metadata ?? null,
  });
  if (recomputed !== entry.hash) {
    return { seq: entry.seq, reason: 'hash mismatch: the entry was modified after it was written' };
  }
  return null;
}

/** A tampered row may hold a non-string; hash what is there rather than crash the walk. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}
