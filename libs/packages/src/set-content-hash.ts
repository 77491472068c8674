import { parse as parseToml } from 'smol-toml';

const SIGNING_HEADER = /^[ \t]*\[[ \t]*signing[ \t]*\][ \t]*(#.*)?\r?\n?$/;
const TABLE_HEADER = /^[ \t]*\[/;
const HASH_LINE = /^([ \t]*)content_hash[ \t]*=.*?(\r?\n)?$/;
const DOTTED_OR_INLINE = /^[ \t]*signing[ \t]*[.=]/;
const QUOTED_HASH = /(content_hash[ \t]*=[ \t]*)("[^"\n]*"|'[^'\n]*')/;

/**
 * `package.toml` text with `[signing] content_hash` set to `hash`, every other byte unchanged:
 * the value is replaced where it is, inserted under an existing `[signing]` header, or a
 * `[signing]` table is appended. Throws when the result does not read back as that hash (a
 * layout this edit does not understand), so a build never writes a manifest it cannot verify.
 */
export function setContentHash(text: string, hash: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/(?<=\n)/);
  const header = lines.findIndex((line) => SIGNING_HEADER.test(line));
  let out: string;
  if (header >= 0) {
    const next = lines.findIndex((line, i) => i > header && TABLE_HEADER.test(line));
    const end = next < 0 ? lines.length : next;
    const at = lines.findIndex((line, i) => i > header && i < end && HASH_LINE.test(line));
    if (at >= 0) {
      const line = lines[at] ?? '';
      lines[at] = QUOTED_HASH.test(line)
        ? line.replace(QUOTED_HASH, `$1"${hash}"`)
        : line.replace(
            HASH_LINE,
            (_, indent: string, terminator: string | undefined) =>
              `${indent}content_hash = "${hash}"${terminator ?? ''}`,
          );
    } else {
      if (!(lines[header] ?? '').endsWith('\n')) lines[header] += eol;
      lines.splice(header + 1, 0, `content_hash = "${hash}"${eol}`);
    }
    out = lines.join('');
  } else {
    const inline = lines.findIndex((line) => DOTTED_OR_INLINE.test(line) && QUOTED_HASH.test(line));
    if (inline >= 0) {
      lines[inline] = (lines[inline] ?? '').replace(QUOTED_HASH, `$1"${hash}"`);
      out = lines.join('');
    } else {
      const separator = text === '' || text.endsWith('\n') ? '' : eol;
      out = `${text}${separator}${eol}[signing]${eol}content_hash = "${hash}"${eol}`;
    }
  }
  if (readHash(out) !== hash)
    throw new Error('could not set [signing] content_hash in package.toml: write it as a [signing] table');
  return out;
}

function readHash(text: string): unknown {
  try {
    const signing = (parseToml(text) as { signing?: { content_hash?: unknown } }).signing;
    return signing?.content_hash;
  } catch {
    return undefined;
  }
}
