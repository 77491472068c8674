import { createHash } from 'node:crypto';
import {
  ed25519SignatureValid,
  parseSignedCheckpoint,
  signCheckpoint,
  type AuditCheckpoint,
  type CheckpointSigner,
  type CheckpointSink,
  type SignedCheckpoint,
} from './audit-checkpoint.ts';
import { CHAIN_ANCHOR, canonicalJson } from './audit-hash.ts';
import { SEGMENT_FORMAT, verifySegment, type AuditSegment } from './audit-segment.ts';

/**
 * The audit archive (docs/retention.md "The audit archive"): audit entries that retention takes
 * out of the live store are first written to the checkpoint sink as segments, each with a signed
 * checkpoint at its last entry, and listed in a signed manifest. Verify then checks the live
 * chain as the continuation of the archived one, and the archived segments themselves.
 *
 * Sink layout (next to `checkpoints/` and `latest.json`):
 * - `archive/segments/<from>-<to>.json`: the segment, in the export format of `audit export`;
 * - `archive/segments/<from>-<to>.checkpoint.json`: a signed checkpoint at seq `<to>`;
 * - `archive/manifest.json`: every archived segment in order, signed.
 * Seqs in names are zero-padded to 12 digits so that names sort in chain order.
 */
export const ARCHIVE_FORMAT = 'agent-platform-audit-archive/1';
export const ARCHIVE_MANIFEST = 'archive/manifest.json';

/** One archived segment as the manifest lists it. */
export interface ArchivedSegment {
  /** Object name of the segment. */
  name: string;
  /** Object name of its checkpoint. */
  checkpoint: string;
  from_seq: number;
  to_seq: number;
  /** Hash of the entry before `from_seq` (the chain anchor for seq 1). */
  prev_hash: string;
  /** Hash of entry `to_seq`: the next segment, or the live chain, links to it. */
  last_hash: string;
  /** `sha256:<hex>` of the segment object's bytes. */
  sha256: string;
  archived_at: string;
}

export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  key_id: string;
  updated_at: string;
  segments: ArchivedSegment[];
}

export interface SignedManifest {
  manifest: ArchiveManifest;
  algorithm: 'Ed25519';
  signature: string;
}

/** What the archive holds, as verify and the sweep read it. */
export type ArchiveState =
  | { status: 'none' }
  | { status: 'ok'; manifest: ArchiveManifest; last: ArchivedSegment }
  | { status: 'failed'; reason: string };

export interface AuditArchive {
  readonly describe: string;
  /** The manifest, its signature and links checked. Never throws: a failure is a reason. */
  state(): Promise<ArchiveState>;
  /** Reads one archived segment and its checkpoint back and checks them; a reason, or null when good. */
  checkSegment(ref: ArchivedSegment): Promise<string | null>;
  /** The hash of archived entry `seq` (reads the segment holding it), or null. */
  hashAt(manifest: ArchiveManifest, seq: number): Promise<string | null>;
  /**
   * Archives `segment` (which must continue `manifest`): writes the segment and its checkpoint
   * (or keeps identical ones a crashed earlier attempt wrote), reads both back and verifies
   * them, then writes and reads back the manifest listing it. Resolves to the new manifest;
   * throws when anything is missing, different or unverifiable, so the caller deletes nothing.
   */
  archive(segment: AuditSegment, manifest: ArchiveManifest | null, at: string): Promise<ArchiveManifest>;
}

/** `archive/segments/<from>-<to>` (12-digit seqs). */
export function segmentBaseName(from: number, to: number): string {
  const pad = (n: number) => String(n).padStart(12, '0');
  return `archive/segments/${pad(from)}-${pad(to)}`;
}

export function sha256Of(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The bytes of a segment object: deterministic for the same entries, so a retry writes the same object. */
export function segmentBytes(segment: AuditSegment): Buffer {
  return Buffer.from(`${JSON.stringify(segment, null, 2)}\n`, 'utf8');
}

function jsonBytes(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
}

export function signManifest(manifest: ArchiveManifest, signer: CheckpointSigner): SignedManifest {
  return {
    manifest,
    algorithm: 'Ed25519',
    signature: signer.sign(Buffer.from(canonicalJson(manifest), 'utf8')),
  };
}

/**
 * Parses and checks a manifest object: the signature by `publicKey`, and that its segments form
 * one chain from seq 1 (each starts after the one before and links to its last hash). Reason
 * string when not; never throws.
 */
export function checkManifest(bytes: Uint8Array, publicKey: string): ArchiveManifest | string {
  let signed: SignedManifest;
  try {
    signed = JSON.parse(Buffer.from(bytes).toString('utf8')) as SignedManifest;
  } catch {
    return `${ARCHIVE_MANIFEST} is not JSON`;
  }
  const m = signed?.manifest;
  if (typeof signed?.signature !== 'string' || m?.format !== ARCHIVE_FORMAT || !Array.isArray(m.segments)) {
    return `${ARCHIVE_MANIFEST} is not an audit archive manifest (format ${ARCHIVE_FORMAT})`;
  }
  // The statement is the manifest's canonical JSON, exactly as for checkpoints.
  if (!ed25519SignatureValid(Buffer.from(canonicalJson(m), 'utf8'), signed.signature, publicKey))
    return `${ARCHIVE_MANIFEST}: signature does not verify with this platform's checkpoint key`;
  let expectedFrom = 1;
  let prevHash = CHAIN_ANCHOR;
  for (const s of m.segments) {
    if (s.from_seq !== expectedFrom || s.to_seq < s.from_seq)
      return `${ARCHIVE_MANIFEST}: segment ${s.name} does not start at seq ${expectedFrom}`;
    if (s.prev_hash !== prevHash)
      return `${ARCHIVE_MANIFEST}: segment ${s.name} does not link to the segment before it`;
    expectedFrom = s.to_seq + 1;
    prevHash = s.last_hash;
  }
  return m;
}

export function createAuditArchive(deps: { sink: CheckpointSink; signer: CheckpointSigner }): AuditArchive {
  const { sink, signer } = deps;

  async function state(): Promise<ArchiveState> {
    let bytes: Uint8Array | null;
    try {
      bytes = await sink.read(ARCHIVE_MANIFEST);
    } catch (error) {
      // Worded as the checkpoint check words it: both live in the one sink.
      return {
        status: 'failed',
        reason: `the checkpoint sink ${sink.describe} could not be read: ${(error as Error).message}`,
      };
    }
    if (bytes === null) return { status: 'none' };
    const manifest = checkManifest(bytes, signer.publicKeyPem);
    if (typeof manifest === 'string')
      return { status: 'failed', reason: `audit archive in ${sink.describe}: ${manifest}` };
    const last = manifest.segments.at(-1);
    return last === undefined ? { status: 'none' } : { status: 'ok', manifest, last };
  }

  async function readSegment(
    ref: ArchivedSegment,
  ): Promise<{ segment: AuditSegment; bytes: Uint8Array } | string> {
    const bytes = await sink.read(ref.name);
    if (bytes === null) return `archived segment ${ref.name} is missing from ${sink.describe}`;
    if (sha256Of(bytes) !== ref.sha256)
      return `archived segment ${ref.name} was altered (its sha256 differs from the manifest)`;
    try {
      return { segment: JSON.parse(Buffer.from(bytes).toString('utf8')) as AuditSegment, bytes };
    } catch {
      return `archived segment ${ref.name} is not JSON`;
    }
  }

  async function checkSegment(ref: ArchivedSegment): Promise<string | null> {
    try {
      const read = await readSegment(ref);
      if (typeof read === 'string') return read;
      const cpBytes = await sink.read(ref.checkpoint);
      if (cpBytes === null)
        return `the checkpoint of archived segment ${ref.name} is missing from ${sink.describe}`;
      const signed = parseSignedCheckpoint(cpBytes);
      if (typeof signed === 'string') return `${ref.checkpoint}: ${signed}`;
      return segmentProblem(read.segment, signed, ref);
    } catch (error) {
      return `archived segment ${ref.name} could not be read from ${sink.describe}: ${(error as Error).message}`;
    }
  }

  /** The segment's own chain, its checkpoint, and the manifest's account of it agree. */
  async function segmentProblem(
    segment: AuditSegment,
    signed: SignedCheckpoint,
    ref: ArchivedSegment,
  ): Promise<string | null> {
    const verdict = await verifySegment(segment, signed, signer.publicKeyPem);
    if (!verdict.valid) return `archived segment ${ref.name}: ${verdict.reason ?? 'does not verify'}`;
    const last = segment.entries.at(-1);
    if (
      segment.from_seq !== ref.from_seq ||
      segment.prev_hash !== ref.prev_hash ||
      last?.seq !== ref.to_seq ||
      last.hash !== ref.last_hash
    ) {
      return `archived segment ${ref.name} does not cover seqs ${ref.from_seq}..${ref.to_seq} as the manifest says`;
    }
    if (signed.checkpoint.tip_seq !== ref.to_seq)
      return `the checkpoint of archived segment ${ref.name} is not at its last entry`;
    return null;
  }

  async function hashAt(manifest: ArchiveManifest, seq: number): Promise<string | null> {
    const ref = manifest.segments.find((s) => s.from_seq <= seq && seq <= s.to_seq);
    if (ref === undefined) return null;
    if (ref.to_seq === seq) return ref.last_hash;
    const read = await readSegment(ref);
    return typeof read === 'string' ? null : (read.segment.entries[seq - ref.from_seq]?.hash ?? null);
  }

  async function archive(
    segment: AuditSegment,
    manifest: ArchiveManifest | null,
    at: string,
  ): Promise<ArchiveManifest> {
    const last = segment.entries.at(-1);
    if (segment.format !== SEGMENT_FORMAT || last === undefined) throw new Error('archive: an empty segment');
    const to = last.seq;
    const previous = manifest?.segments.at(-1);
    const expectedFrom = (previous?.to_seq ?? 0) + 1;
    if (segment.from_seq !== expectedFrom || segment.prev_hash !== (previous?.last_hash ?? CHAIN_ANCHOR)) {
      throw new Error(
        `archive: segment ${segment.from_seq}..${to} does not continue the archive (next seq ${expectedFrom})`,
      );
    }
    const base = segmentBaseName(segment.from_seq, to);
    const ref: ArchivedSegment = {
      name: `${base}.json`,
      checkpoint: `${base}.checkpoint.json`,
      from_seq: segment.from_seq,
      to_seq: to,
      prev_hash: segment.prev_hash,
      last_hash: last.hash,
      sha256: '',
      archived_at: at,
    };
    const bytes = segmentBytes(segment);
    ref.sha256 = sha256Of(bytes);

    // A crashed earlier attempt may have written this segment: identical bytes are kept (nothing
    // is archived twice); different bytes for the same seqs mean the live entries changed since.
    const existing = await sink.read(ref.name);
    if (existing !== null && sha256Of(existing) !== ref.sha256) {
      throw new Error(
        `archive: ${ref.name} already exists in ${sink.describe} with other content; the live entries ${ref.from_seq}..${to} changed since it was written`,
      );
    }
    if (existing === null) await sink.put(ref.name, bytes);
    const existingCheckpoint = await sink.read(ref.checkpoint);
    const reusable = existingCheckpoint === null ? null : parseSignedCheckpoint(existingCheckpoint);
    const keep =
      reusable !== null &&
      typeof reusable !== 'string' &&
      (await segmentProblem(segment, reusable, ref)) === null;
    if (!keep) {
      const checkpoint: AuditCheckpoint = {
        entry_count: to,
        tip_hash: last.hash,
        tip_seq: to,
        at,
        key_id: signer.keyId,
      };
      await sink.put(ref.checkpoint, jsonBytes(signCheckpoint(checkpoint, signer)));
    }

    // Read back what the sink now holds and verify it, as an auditor would, before anyone deletes.
    const problem = await checkSegment(ref);
    if (problem !== null) throw new Error(`archive: read-back failed: ${problem}`);

    const next: ArchiveManifest = {
      format: ARCHIVE_FORMAT,
      key_id: signer.keyId,
      updated_at: at,
      segments: [...(manifest?.segments ?? []), ref],
    };
    await sink.put(ARCHIVE_MANIFEST, jsonBytes(signManifest(next, signer)));
    const readBack = await sink.read(ARCHIVE_MANIFEST);
    const checked =
      readBack === null
        ? 'the manifest is missing after writing it'
        : checkManifest(readBack, signer.publicKeyPem);
    if (typeof checked === 'string') throw new Error(`archive: read-back of the manifest failed: ${checked}`);
    if (checked.segments.at(-1)?.sha256 !== ref.sha256)
      throw new Error('archive: read-back of the manifest does not list the new segment');
    return next;
  }

  return { describe: sink.describe, state, checkSegment, hashAt, archive };
}
