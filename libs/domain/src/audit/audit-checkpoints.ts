import type { Store } from '@agent-platform/store';
import { liveBelow, type StoredAuditEntry } from './audit-chain.ts';
import { Errors } from '../errors/errors.ts';
import { createAuditArchive, type AuditArchive } from './audit-archive.ts';
import type { Clock } from '../time/clock.ts';
import {
  checkpointName,
  checkpointSignatureValid,
  logView,
  matchCheckpoint,
  parseSignedCheckpoint,
  signCheckpoint,
  type AuditCheckpoint,
  type CheckpointSigner,
  type CheckpointSink,
  type SignedCheckpoint,
  type SupersededCheckpoint,
} from './audit-checkpoint.ts';

export interface AuditCheckpointsDeps {
  store: Store;
  clock: Clock;
  /** `[audit.checkpoints] sink`; null when it is empty (checkpoints off). */
  sink: CheckpointSink | null;
  signer: CheckpointSigner;
  /** `[audit.checkpoints] interval_secs`, read per tick (reloadable). */
  intervalSecs: () => number;
}

/** One written checkpoint as GET /security/checkpoints lists it. */
export interface CheckpointRecord extends SignedCheckpoint {
  name: string;
  sink: string;
}

/** What GET /security/verify adds about the latest checkpoint. */
export interface CheckpointCheck {
  /** not_configured: no sink; none_written: the sink holds none yet; verified / failed. */
  status: 'not_configured' | 'none_written' | 'verified' | 'failed';
  checkpoint: (AuditCheckpoint & { sink: string; signature_valid: boolean }) | null;
  reason?: string;
}

export interface AuditCheckpoints {
  readonly configured: boolean;
  /** The key verifiers need (docs/audit.md "Checkpoints"). */
  readonly publicKey: { key_id: string; public_key: string; public_key_pem: string };
  /**
   * Takes and writes a checkpoint now. Conflict when no sink is configured, and Conflict when the
   * chain no longer reaches the sink's latest checkpoint (entries removed, store replaced, a forged
   * latest): a new checkpoint would otherwise bless the damaged chain and hide it from every later
   * verify. `supersede` (an operator's reason, after establishing why, e.g. a restore) writes one
   * anyway, recording the replaced checkpoint and the reason inside the signed statement.
   */
  write(options?: { supersede?: string }): Promise<CheckpointRecord>;
  /**
   * The scheduled write: at most one checkpoint per `interval_secs` period across every process
   * on the store (claimed through a store counter); null when another process (or an earlier
   * tick) had the period, or no sink is configured. Never supersedes: a chain that no longer
   * reaches the latest checkpoint makes it fail (Conflict) every period until an operator acts.
   * Its `at` is the instant the period was claimed, so it lies in the period it was written for
   * however long the check before it takes (a fleet's checkpoints are one per period by `at` too).
   */
  writeIfDue(): Promise<CheckpointRecord | null>;
  /** Written checkpoints, newest first, as recorded in the store (the sink holds the originals). */
  list(limit: number): Promise<CheckpointRecord[]>;
  /**
   * Checks the chain against the sink's latest checkpoint. Never throws for a bad checkpoint.
   * `chain` is the whole chain as verify sees it (archived and live, docs/retention.md); absent:
   * the live log alone.
   */
  check(chain?: ChainView): Promise<CheckpointCheck>;
  /** The audit archive in the same sink (retention, docs/retention.md); null without a sink. */
  readonly archive: AuditArchive | null;
}

/** The chain a checkpoint is matched against: its length and a reader of any entry's hash. */
export interface ChainView {
  entryCount: number;
  hashAt(seq: number): Promise<string | null>;
}

type StoredRecord = { name: string; sink: string; signed: SignedCheckpoint };

/** Signed checkpoints of the audit chain, written to an external sink (docs/audit.md "Checkpoints"). */
export function createAuditCheckpoints(deps: AuditCheckpointsDeps): AuditCheckpoints {
  const chain = deps.store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });
  const written = deps.store.log<StoredRecord>('audit_checkpoints');
  const sink = deps.sink;

  async function write(options: { supersede?: string; at?: Date } = {}): Promise<CheckpointRecord> {
    if (sink === null) throw Errors.conflict('audit checkpoints are off: [audit.checkpoints] sink is empty');
    const before = await check();
    const supersedes = before.status === 'failed' ? superseded(before, options.supersede) : undefined;
    const tip = await chain.tip();
    const checkpoint: AuditCheckpoint = {
      // The length of the whole chain: retention may have archived its oldest entries out of the
      // live store (docs/retention.md), so the tip's seq counts them, not the live rows.
      entry_count: tip?.seq ?? 0,
      tip_hash: tip === null ? null : String(tip.hash),
      tip_seq: tip?.seq ?? 0,
      at: (options.at ?? deps.clock.now()).toISOString(),
      key_id: deps.signer.keyId,
      ...(supersedes === undefined ? {} : { supersedes }),
    };
    const signed = signCheckpoint(checkpoint, deps.signer);
    const name = checkpointName(checkpoint);
    await sink.write(name, Buffer.from(`${JSON.stringify(signed, null, 2)}\n`, 'utf8'));
    await written.append(() => ({ name, sink: sink.describe, signed }));
    return { ...signed, name, sink: sink.describe };
  }

  /** What a superseding checkpoint records; Conflict when the operator gave no reason. */
  function superseded(failed: CheckpointCheck, reason: string | undefined): SupersededCheckpoint {
    const failure = failed.reason ?? 'the chain does not reach the latest checkpoint';
    if (reason === undefined || reason.trim() === '') {
      throw Errors.conflict(
        `not writing a checkpoint: ${failure}. A new checkpoint would hide this from every later verify; ` +
          'find out why first, then write one with a supersede_reason (docs/audit.md "When verify fails")',
        { failure, latest: failed.checkpoint === null ? null : checkpointName(failed.checkpoint) },
      );
    }
    const latest = failed.checkpoint;
    return {
      name: latest === null ? null : checkpointName(latest),
      entry_count: latest?.entry_count ?? null,
      tip_hash: latest?.tip_hash ?? null,
      failure,
      reason: reason.trim(),
    };
  }

  async function writeIfDue(): Promise<CheckpointRecord | null> {
    if (sink === null) return null;
    const intervalMs = Math.max(1, deps.intervalSecs()) * 1000;
    const now = deps.clock.now().getTime();
    const period = Math.floor(now / intervalMs);
    const expiresAt = new Date((period + 2) * intervalMs).toISOString();
    const { applied } = await deps.store.counters.add(`audit-checkpoint:period:${intervalMs}:${period}`, 1, { limit: 1, expiresAt });
    return applied ? write({ at: new Date(now) }) : null;
  }

  async function list(limit: number): Promise<CheckpointRecord[]> {
    const rows = await written.list({ order: 'desc', limit });
    return rows.map((r) => ({ ...r.signed, name: r.name, sink: r.sink }));
  }

  async function check(chainView?: ChainView): Promise<CheckpointCheck> {
    if (sink === null) return { status: 'not_configured', checkpoint: null };
    let bytes: Uint8Array | null;
    try {
      bytes = await sink.latest();
    } catch (error) {
      // The chain's length cannot be confirmed: say so rather than answer valid on half a check.
      return { status: 'failed', checkpoint: null, reason: `the checkpoint sink ${sink.describe} could not be read: ${(error as Error).message}` };
    }
    if (bytes === null) return { status: 'none_written', checkpoint: null };
    const signed = parseSignedCheckpoint(bytes);
    if (typeof signed === 'string') return { status: 'failed', checkpoint: null, reason: `latest checkpoint in ${sink.describe}: ${signed}` };
    const signatureValid = checkpointSignatureValid(signed, deps.signer.publicKeyPem);
    const view = { ...signed.checkpoint, sink: sink.describe, signature_valid: signatureValid };
    if (!signatureValid) {
      return {
        status: 'failed',
        checkpoint: view,
        reason: `checkpoint signature does not verify (checkpoint of ${signed.checkpoint.at} in ${sink.describe}, key ${signed.checkpoint.key_id}; this platform's key is ${deps.signer.keyId})`,
      };
    }
    const match = await matchCheckpoint(signed.checkpoint, chainView ?? (await wholeChain()));
    return match.ok ? { status: 'verified', checkpoint: view } : { status: 'failed', checkpoint: view, reason: match.reason ?? 'the chain does not reach the checkpoint' };
  }

  /**
   * The chain as verify sees it when no walk supplied it: the archived entries (retention, docs/
   * retention.md) and the live ones after them. Without an archive, the live log alone.
   */
  async function wholeChain(): Promise<ChainView> {
    const state = archive === null ? null : await archive.state();
    if (state === null || state.status !== 'ok') return logView(chain);
    const archivedTo = state.last.to_seq;
    const live = await chain.count();
    const below = await liveBelow(chain, archivedTo + 1);
    return {
      entryCount: archivedTo + live - below,
      hashAt: async (seq) => (seq <= archivedTo ? (archive as AuditArchive).hashAt(state.manifest, seq) : (await logView(chain)).hashAt(seq)),
    };
  }

  const archive = sink === null ? null : createAuditArchive({ sink, signer: deps.signer });

  return {
    configured: sink !== null,
    publicKey: { key_id: deps.signer.keyId, public_key: deps.signer.publicKey, public_key_pem: deps.signer.publicKeyPem },
    write,
    writeIfDue,
    list,
    check,
    archive,
  };
}
