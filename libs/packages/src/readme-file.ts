import { WHOLE_FILE, type FileProblems } from './problems.ts';

/**
 * The optional README of a package, at its root beside package.toml (docs/packages.md "README").
 * It travels in the archive and a registry shows it rendered, but it is documentation only: it is
 * not part of `content_hash` (which covers the payload), so editing it needs no rebuild of the
 * hash, and nothing the platform runs ever reads it.
 */
export const README_FILE = 'README.md';

/**
 * The largest README read: a long README is a few tens of KiB; the limit keeps a registry page
 * and its Markdown renderer cheap, and is checked before the text is decoded.
 */
export const MAX_README_BYTES = 256 * 1024;

/** The README text, or undefined after a problem (too large, not UTF-8). */
export function checkReadme(bytes: Uint8Array, p: FileProblems): string | undefined {
  if (bytes.byteLength > MAX_README_BYTES) {
    p.add(
      WHOLE_FILE,
      'readme-too-large',
      `is ${bytes.byteLength} bytes, larger than ${MAX_README_BYTES} bytes (256 KiB): shorten it or link to longer documentation`,
    );
    return undefined;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    p.add(WHOLE_FILE, 'utf8', 'must be UTF-8 text');
    return undefined;
  }
}
