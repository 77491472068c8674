import { createPublicKey, verify } from 'node:crypto';
import type { AppendLog } from '@agent-platform/store';
import { canonicalJson } from './audit-hash.ts';

/**
 * A signed statement of how long the audit chain was (docs/audit.md "Checkpoints"). The chain
 * alone cannot show that entries were cut off its end, or that the whole store was swapped for a
 * fresh chain; a checkpoint kept outside the store (a `CheckpointSink`) can.
 */
export interface AuditCheckpoint {
  /** Entries in the chain when the checkpoint was taken. */
  entry_count: number;
  /** Hash of entry `tip_seq` (the newest), or null for an empty chain. */
  tip_hash: string | null;
  /** Seq of the newest entry (equals entry_count in an intact chain); 0 for an empty chain. */
  tip_seq: number;
  /** ISO 8601 time the checkpoint was taken. */
  at: string;
  /** Key id of the Ed25519 key that signed it (`sha256:<32 hex>` of the raw public key). */
  key_id: string;
  /**
   * Present only on a checkpoint an operator wrote over one the chain no longer reaches (after a
   * restore from backup, say): which checkpoint it replaces and why, inside the signed statement,
   * so that the sink's history shows every acknowledged discontinuity.
   */
  supersedes?: SupersededCheckpoint;
}

/** The checkpoint a superseding one replaces, and the operator's reason. */
export interface SupersededCheckpoint {
  /** The replaced checkpoint's object name, or null when the sink's latest could not be parsed. */
  name: string | null;
  entry_count: number | null;
  tip_hash: string | null;
  /** Why the chain no longer reaches it (the failed check). */
  failure: string;
  /** The operator's stated reason (e.g. `restored backup 2026-11-20`). */
  reason: string;
}

/**
 * A checkpoint file: the checkpoint and a detached Ed25519 signature (base64url) over the
 * canonical JSON of `checkpoint` (keys sorted, no whitespace: `canonicalJson`).
 */
export interface SignedCheckpoint {
  checkpoint: AuditCheckpoint;
  algorithm: 'Ed25519';
  signature: string;
}

/** The platform's checkpoint key (the private half stays behind `sign`). */
export interface CheckpointSigner {
  readonly keyId: string;
  /** `ed25519:<base64url raw key>`, as the CLI and docs/audit.md take it. */
  readonly publicKey: string;
  readonly publicKeyPem: string;
  /** base64url Ed25519 signature of `bytes`. */
  sign(bytes: Buffer): string;
}

/**
 * Where checkpoints are kept, outside the store (a directory, an S3 bucket with object lock).
 * Each checkpoint is an object of its own that is never rewritten, plus one `latest` pointer.
 */
export interface CheckpointSink {
  /** For logs and responses: `dir:/path` or `s3://bucket/prefix` (never a secret). */
  readonly describe: string;
  /** Stores one checkpoint under `name` and makes it the latest. */
  write(name: string, bytes: Uint8Array): Promise<void>;
  /** The latest checkpoint's bytes, or null when none was written. */
  latest(): Promise<Uint8Array | null>;
  /** One checkpoint by name, or null. */
  read(name: string): Promise<Uint8Array | null>;
  close(): Promise<void>;
}

/** The bytes a checkpoint's signature covers. */
export function checkpointStatement(checkpoint: AuditCheckpoint): Buffer {
  return Buffer.from(canonicalJson(checkpoint), 'utf8');
}

export function signCheckpoint(checkpoint: AuditCheckpoint, signer: CheckpointSigner): SignedCheckpoint {
  return { checkpoint, algorithm: 'Ed25519', signature: signer.sign(checkpointStatement(checkpoint)) };
}

/** The object name of a checkpoint: sorts by time, names its count. */
export function checkpointName(checkpoint: AuditCheckpoint): string {
  return `checkpoints/${checkpoint.at.replace(/:/g, '-')}-${checkpoint.entry_count}.json`;
}

/**
 * Parses a checkpoint file; a reason string when it is not one. Never throws.
 */
export function parseSignedCheckpoint(bytes: Uint8Array | string): SignedCheckpoint | string {
  let value: unknown;
  try {
    value = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch {
    return 'the checkpoint is not JSON';
  }
  const v = value as Partial<SignedCheckpoint> | null;
  const c = v?.checkpoint as Partial<AuditCheckpoint> | undefined;
  const ok =
    typeof v?.signature === 'string' &&
    typeof c === 'object' &&
    c !== null &&
    Number.isSafeInteger(c.entry_count) &&
    (c.entry_count ?? -1) >= 0 &&
    Number.isSafeInteger(c.tip_seq) &&
    (typeof c.tip_hash === 'string' || c.tip_hash === null) &&
    typeof c.at === 'string' &&
    typeof c.key_id === 'string';
  return ok ? (v as SignedCheckpoint) : 'the checkpoint is malformed (expected {checkpoint:{entry_count,tip_hash,tip_seq,at,key_id},algorithm,signature})';
}

/**
 * True when `signed.signature` is an Ed25519 signature of its checkpoint by `publicKey`
 * (`ed25519:<base64url>` or a PEM public key). Never throws.
 */
export function checkpointSignatureValid(signed: SignedCheckpoint, publicKey: string): boolean {
  try {
    const trimmed = publicKey.trim();
    const key = trimmed.startsWith('ed25519:')
      ? createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(trimmed.slice(8), 'base64url')]), format: 'der', type: 'spki' })
      : createPublicKey(trimmed);
    const signature = Buffer.from(signed.signature, 'base64url');
    return signature.length === 64 && verify(null, checkpointStatement(signed.checkpoint), key, signature);
  } catch {
    return false;
  }
}

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows. */
export const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The outcome of checking a chain against a checkpoint: null reason = the chain reaches it. */
export interface CheckpointMatch {
  ok: boolean;
  reason?: string;
}

/**
 * Whether a chain (its live entry count and a way to read entry `seq`'s hash) still reaches the
 * checkpoint: at least `entry_count` entries, and entry `tip_seq` has `tip_hash`. Pure over the
 * two readers, so the api (the store's log) and the offline CLI (an exported segment) agree.
 */
export async function matchCheckpoint(
  checkpoint: AuditCheckpoint,
  chain: { entryCount: number; hashAt(seq: number): Promise<string | null> },
): Promise<CheckpointMatch> {
  if (chain.entryCount < checkpoint.entry_count) {
    return {
      ok: false,
      reason: `the chain has ${chain.entryCount} entries, the checkpoint of ${checkpoint.at} recorded ${checkpoint.entry_count} (entries were removed)`,
    };
  }
  if (checkpoint.tip_seq === 0 || checkpoint.tip_hash === null) return { ok: true };
  const hash = await chain.hashAt(checkpoint.tip_seq);
  if (hash !== checkpoint.tip_hash) {
    return {
      ok: false,
      reason: `entry ${checkpoint.tip_seq}'s hash differs from the checkpoint of ${checkpoint.at} (the chain was replaced or rewritten)`,
    };
  }
  return { ok: true };
}

/** `matchCheckpoint` over a store's append log. */
export async function matchLog(checkpoint: AuditCheckpoint, log: AppendLog<{ hash: string }>): Promise<CheckpointMatch> {
  const entryCount = await log.count();
  return matchCheckpoint(checkpoint, {
    entryCount,
    hashAt: async (seq) => {
      const [entry] = await log.scan(seq, 1);
      return entry === undefined || entry.seq !== seq ? null : String(entry.hash);
    },
  });
}
