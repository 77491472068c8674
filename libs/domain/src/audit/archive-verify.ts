import type { AppendLog } from '@agent-platform/store';
import type { AuditArchive } from './audit-archive.ts';
import { CHAIN_START, type ChainStart, type StoredAuditEntry } from './audit-chain.ts';
import type { ArchiveReport } from './audit-entry.ts';

/** What verify learned from the audit archive before walking the live chain. */
export interface ArchiveCheck {
  /** Where the live chain must begin: after the last archived segment, linked to its last hash. */
  start: ChainStart;
  report: ArchiveReport;
  /** The first archived seq found bad, when the archive failed. */
  failedSeq?: number;
  /** Hash of an archived entry (for a checkpoint older than the live chain). */
  hashAt(seq: number): Promise<string | null>;
}

/**
 * Reads the archive manifest (signature and links, every call) and re-verifies the archived
 * segments this process has not verified yet, or all of them when `full` (docs/retention.md "How
 * verify holds"): each segment object must still have the digest the manifest recorded, hash and
 * link entry by entry, and reach its own signed checkpoint. `verified` remembers the good ones
 * between calls, so a repeated verify reads only the manifest. With an unreadable or invalid
 * manifest, the live chain is walked from its own first entry and the report is failed.
 */
export async function checkArchive(
  archive: AuditArchive,
  log: AppendLog<StoredAuditEntry>,
  full: boolean,
  verified: Set<string>,
): Promise<ArchiveCheck> {
  const state = await archive.state();
  const base = { sink: archive.describe, checked_segments: 0 };
  if (state.status === 'none') {
    return {
      start: CHAIN_START,
      report: { ...base, status: 'none', segments: 0, from_seq: null, to_seq: null },
      hashAt: async () => null,
    };
  }
  if (state.status === 'failed') {
    const [first] = await log.scan(1, 1);
    const start = first === undefined ? CHAIN_START : { seq: first.seq, prevHash: String(first.prev_hash) };
    return {
      start,
      report: { ...base, status: 'failed', segments: 0, from_seq: null, to_seq: null, reason: state.reason },
      hashAt: async () => null,
    };
  }
  const { manifest, last } = state;
  if (full) verified.clear();
  const report: ArchiveReport = {
    ...base,
    status: 'verified',
    segments: manifest.segments.length,
    from_seq: 1,
    to_seq: last.to_seq,
  };
  let failedSeq: number | undefined;
  for (const ref of manifest.segments) {
    const key = `${ref.name}:${ref.sha256}`;
    if (verified.has(key)) continue;
    const problem = await archive.checkSegment(ref);
    report.checked_segments += 1;
    if (problem !== null) {
      report.status = 'failed';
      report.reason = problem;
      failedSeq = ref.from_seq;
      break;
    }
    verified.add(key);
  }
  return {
    start: { seq: last.to_seq + 1, prevHash: last.last_hash },
    report,
    ...(failedSeq === undefined ? {} : { failedSeq }),
    hashAt: (seq) => archive.hashAt(manifest, seq),
  };
}
