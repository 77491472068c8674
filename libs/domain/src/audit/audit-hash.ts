import { createHash } from 'node:crypto';
import type { AuditEntry } from './audit-entry.ts';

/**
 * The audit chain's hash construction (spec §Resources "Audit entry", DECISIONS D9), pure so that
 * the trail, its verifier and docs/audit.md agree byte for byte. A third party can recompute every
 * hash from `GET /security/audit` output alone:
 *
 *   payload = for each field in CHAIN_FIELDS order: `<utf8 byte length of value>:<value>`
 *   hash    = "sha256:" + lowercase hex(sha256(payload))
 *
 * Length prefixes make the concatenation unambiguous: `ab`+`c` and `a`+`bc` hash differently.
 */

export const HASH_ALGORITHM = 'sha256' as const;

/** `prev_hash` of the first entry: the algorithm prefix and 64 zeros. */
export const CHAIN_ANCHOR = `sha256:${'0'.repeat(64)}`;

/** The fields the chain hash covers, in payload order. */
export const CHAIN_FIELDS = [
  'prev_hash',
  'seq',
  'timestamp',
  'category',
  'identity',
  'role',
  'action',
  'target',
  'result',
  'metadata_hash',
] as const;

/**
 * Not covered: `id` mirrors `seq` (it is the storage row id) and carries no information of its own.
 * `metadata` is covered indirectly through `metadata_hash`.
 */
export const CHAIN_EXCLUDES = ['id'] as const;

/** The values hashed for one entry; `prev_hash` is the previous entry's `hash` or CHAIN_ANCHOR. */
/** The fields the chain hash covers: an entry as stored, less its own hash, plus its seq. */
// `category` is any string: the verifier hashes what is stored, even a tampered value.
export type ChainFields = Omit<AuditEntry, 'id' | 'hash' | 'category'> & { prev_hash: string; category: string };

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * JSON with object keys sorted (by UTF-16 code unit, as `Array.prototype.sort` does) at every
 * depth and no whitespace. Otherwise JSON.stringify semantics: `undefined` members are dropped,
 * non-finite numbers become null.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value) as string | undefined;
    return text ?? 'null';
  }
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
  return `{${parts.join(',')}}`;
}

/** `sha256:<hex>` of the canonical JSON of metadata, or the empty string for null. */
export function metadataHash(metadata: Record<string, unknown> | null): string {
  return metadata === null ? '' : `sha256:${sha256Hex(canonicalJson(metadata))}`;
}

/** The exact bytes (as a string) that are hashed, exported for docs and third-party checks. */
export function chainPayload(fields: ChainFields): string {
  const values: Record<(typeof CHAIN_FIELDS)[number], string> = {
    prev_hash: fields.prev_hash,
    seq: String(fields.seq),
    timestamp: fields.timestamp,
    category: fields.category,
    identity: fields.identity,
    role: fields.role,
    action: fields.action,
    target: fields.target,
    result: fields.result,
    metadata_hash: metadataHash(fields.metadata),
  };
  return CHAIN_FIELDS.map((f) => `${Buffer.byteLength(values[f], 'utf8')}:${values[f]}`).join('');
}

export function chainHash(fields: ChainFields): string {
  return `sha256:${sha256Hex(chainPayload(fields))}`;
}
