/**
 * Keys whose values are dropped from audit metadata, at any depth (case-insensitive substring
 * match). The audit trail is readable by auditors and is append-only, so a secret written into it
 * could never be removed: `value` covers vault and memory values, `token`/`secret`/`password`/
 * `api_key`/`authorization` cover credentials.
 */
export const SECRET_KEY_PATTERN = /secret|password|token|value|api_key|authorization/i;

/**
 * Returns a JSON-safe copy of `metadata` without secret-looking keys (see SECRET_KEY_PATTERN).
 * The copy is what gets stored and hashed, so the stored entry and its hash always agree:
 * non-JSON values (undefined, functions) disappear exactly as JSON.stringify would drop them.
 */
export function sanitizeMetadata(
  metadata: Record<string, unknown> | null | undefined,
): Record<string, unknown> | null {
  if (metadata === null || metadata === undefined) return null;
  const cleaned = strip(metadata) as Record<string, unknown>;
  return JSON.parse(JSON.stringify(cleaned)) as Record<string, unknown>;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!SECRET_KEY_PATTERN.test(k)) out[k] = strip(v);
  }
  return out;
}
