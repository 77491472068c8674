import type { Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import {
  AUDIT_CATEGORIES,
  type AuditCategory,
  type AuditDisabledReport,
  type AuditEntry,
  type AuditQuery,
  type AuditRecordInput,
  type AuditTrail,
  type VerifyReport,
} from './audit-entry.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import {
  CHAIN_START,
  toAuditEntry,
  verifyChain,
  type StoredAuditEntry,
  type VerifiedPrefix,
} from './audit-chain.ts';
import { CHAIN_ANCHOR, chainHash } from './audit-hash.ts';
import { sanitizeMetadata } from './sanitize-metadata.ts';
import type { AuditCheckpoints } from './audit-checkpoints.ts';
import type { AuditArchive } from './audit-archive.ts';
import { checkArchive, type ArchiveCheck } from './archive-verify.ts';

export interface AuditTrailDeps {
  store: Store;
  clock: Clock;
  /** `[audit] enabled`; while false nothing is written and reads answer the disabled shapes. */
  enabled: boolean;
  /** Called after each successful append (metrics). Runs inline: it must not throw or block. */
  onAppend?: (entry: AuditEntry) => void;
  /** Where `audit.verification.failed` goes (docs/events.md); absent: nowhere. */
  events?: EventPublisher;
  /** External checkpoints verify also checks the chain against (absent: none checked). */
  checkpoints?: Pick<AuditCheckpoints, 'check'>;
  /**
   * The audit archive retention writes to (docs/retention.md): verify walks the live chain as its
   * continuation and checks the archived segments. Absent: the live chain must start at seq 1.
   */
  archive?: AuditArchive | null;
}

const DISABLED: AuditDisabledReport = {
  valid: null,
  status: 'disabled',
  reason: 'audit trail is disabled by configuration ([audit] enabled = false)',
};

/** Date, or date-time with optional fraction and zone; a date-time without a zone is read as UTC. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** The hash-chained audit trail on the store's `audit` append log. */
export function createAuditTrail(deps: AuditTrailDeps): AuditTrail {
  const log = deps.store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });

  async function record(input: AuditRecordInput): Promise<AuditEntry | null> {
    if (!deps.enabled) return null;
    const metadata = sanitizeMetadata(input.metadata);
    // The builder may run more than once when another writer wins the race; it reads the clock
    // each time so that timestamps follow seq order.
    const stored = await log.append((tip) => {
      const prevHash = tip === null ? CHAIN_ANCHOR : tip.hash;
      const core = {
        timestamp: deps.clock.now().toISOString(),
        category: input.category,
        identity: input.identity,
        role: input.role,
        action: input.action,
        target: input.target,
        result: input.result,
        metadata,
      };
      const hash = chainHash({ ...core, prev_hash: prevHash, seq: (tip?.seq ?? 0) + 1 });
      return { ...core, prev_hash: prevHash, hash };
    });
    const entry = toAuditEntry(stored);
    deps.onAppend?.(entry);
    return entry;
  }

  async function query(q: AuditQuery): Promise<AuditEntry[]> {
    const category = q.category === undefined ? undefined : parseCategory(q.category);
    const since = q.since === undefined ? undefined : parseSince(q.since);
    if (!deps.enabled) return [];
    const where: { category?: AuditCategory; identity?: string } = {};
    if (category !== undefined) where.category = category;
    if (q.actor !== undefined) where.identity = q.actor;
    const rows = await log.list({
      where,
      order: 'desc',
      limit: q.limit,
      ...(since === undefined ? {} : { since: { field: 'timestamp' as const, value: since } }),
    });
    return rows.map(toAuditEntry);
  }

  /** Where the chain is known good, as far as this process has walked it. */
  let verified: VerifiedPrefix | null = null;
  /** The walk in progress per kind: concurrent callers share it instead of walking again. */
  const walks = new Map<'full' | 'from-prefix', Promise<VerifyReport>>();

  function verify(full: boolean): Promise<VerifyReport> {
    const kind = full ? 'full' : 'from-prefix';
    const running = walks.get(kind);
    if (running !== undefined) return running;
    const walk = (async () => {
      const archive =
        deps.archive === undefined || deps.archive === null
          ? null
          : await checkArchive(deps.archive, log, full, verifiedSegments);
      const start = archive?.start ?? CHAIN_START;
      // The archive ending earlier than at the last walk (a manifest rolled back or removed) means
      // entries the prefix stood on are no longer accounted for: walk again from the start.
      if (start.seq < verifiedStart) verified = null;
      verifiedStart = start.seq;
      const { report, verified: prefix } = await verifyChain(log, full ? null : verified, start);
      // A full walk resets what is known; one from the prefix only extends it.
      if (full || prefix === null || verified === null || prefix.seq >= verified.seq) verified = prefix;
      if (!report.valid) void emitBroken(report);
      return withCheckpoint(await withArchive(report, archive), archive);
    })().finally(() => walks.delete(kind));
    walks.set(kind, walk);
    return walk;
  }

  /** Where the live chain started (after the archive) at the last walk. */
  let verifiedStart = 1;
  /** Archived segments this process read back and found good (by object name and digest). */
  const verifiedSegments = new Set<string>();

  /** Adds the live and archived seq ranges; a failed archive check makes the chain invalid. */
  async function withArchive(walk: VerifyReport, archive: ArchiveCheck | null): Promise<VerifyReport> {
    if (archive === null) return walk;
    const [first] = await log.scan(archive.start.seq, 1);
    const tip = await log.tip();
    const report: VerifyReport = {
      ...walk,
      live: { from_seq: first?.seq ?? null, to_seq: tip?.seq ?? null },
      archive: archive.report,
    };
    if (archive.report.status === 'failed' && walk.valid) {
      report.valid = false;
      report.first_invalid_reason = archive.report.reason ?? 'the audit archive does not verify';
      if (archive.report.to_seq !== null)
        report.first_invalid_seq = archive.failedSeq ?? archive.report.to_seq;
      void emitBroken(report);
    }
    return report;
  }

  /** The walk's report plus the latest checkpoint's check: a failed one makes the chain invalid. */
  async function withCheckpoint(walk: VerifyReport, archive: ArchiveCheck | null): Promise<VerifyReport> {
    const report: VerifyReport = { ...walk };
    const view = {
      entryCount: walk.entry_count,
      hashAt: async (seq: number): Promise<string | null> => {
        if (archive !== null && seq < archive.start.seq) return archive.hashAt(seq);
        const [entry] = await log.scan(seq, 1);
        return entry === undefined || entry.seq !== seq ? null : String(entry.hash);
      },
    };
    const check =
      deps.checkpoints === undefined
        ? { status: 'not_configured' as const, checkpoint: null }
        : await deps.checkpoints.check(view);
    report.checkpoint_status = check.status;
    report.checkpoint = check.checkpoint;
    if (check.status === 'failed') {
      report.valid = false;
      report.reason =
        walk.first_invalid_reason ?? check.reason ?? 'the chain does not match the latest checkpoint';
      if (walk.valid) void emitBroken({ ...report, first_invalid_reason: report.reason });
    } else if (!walk.valid) {
      report.reason = walk.first_invalid_reason ?? 'the chain does not verify';
    }
    return report;
  }

  /** One event per distinct break (first bad seq and reason), however often it is verified. */
  async function emitBroken(report: VerifyReport): Promise<void> {
    if (deps.events === undefined || (report.valid && report.checkpoint_status !== 'failed')) return;
    const seq = report.first_invalid_seq ?? null;
    const reason = report.first_invalid_reason ?? 'the chain does not verify';
    const key = `${seq ?? 'none'}:${reason}`;
    try {
      const { applied } = await deps.store.counters.add(`events:audit-broken:${key}`, 1, { limit: 1 });
      if (!applied) return;
    } catch {
      return;
    }
    await deps.events.emit('audit.verification.failed', {
      id: `audit.verification.failed:${key}`,
      agent_id: null,
      data: { first_invalid_seq: seq, reason },
    });
  }

  return {
    enabled: deps.enabled,
    record,
    query,
    verify: async (options = {}) => (deps.enabled ? verify(options.full === true) : DISABLED),
    count: async () => (deps.enabled ? log.count() : 0),
    forgetVerified: () => {
      verified = null;
    },
  };
}

function parseCategory(value: string): AuditCategory {
  const found = AUDIT_CATEGORIES.find((c) => c === value);
  if (found === undefined) {
    throw Errors.validation(
      `unknown audit category '${value}': expected one of ${AUDIT_CATEGORIES.join(', ')}`,
      {
        field: 'category',
        allowed: [...AUDIT_CATEGORIES],
      },
    );
  }
  return found;
}

/**
 * Normalizes an ISO 8601 bound to the stored form (`toISOString`, UTC, milliseconds), because
 * the log compares timestamps lexically.
 */
export function parseSince(value: string): string {
  const match = ISO_8601.exec(value.trim());
  const hasTime = /[T ]/i.test(value.trim());
  const normalized = match !== null && hasTime && match[1] === undefined ? `${value.trim()}Z` : value.trim();
  const ms = match === null ? Number.NaN : Date.parse(normalized.replace(' ', 'T'));
  if (Number.isNaN(ms)) {
    throw Errors.validation(
      `invalid 'since' value '${value.slice(0, 64)}': expected an ISO 8601 date or date-time`,
      {
        field: 'since',
      },
    );
  }
  return new Date(ms).toISOString();
}
