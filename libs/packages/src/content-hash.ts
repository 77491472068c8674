import { createHash } from 'node:crypto';

/** `sha256:<hex>` of `bytes`: the form of `[signing] content_hash` (D4) and of audit hashes (D9). */
export function contentHash(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
