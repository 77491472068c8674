import { describe, expect, it } from 'vitest';
import { setContentHash } from './set-content-hash.ts';

const HASH = `sha256:${'a'.repeat(64)}`;
const OLD = `sha256:${'0'.repeat(64)}`;
const MANIFEST = '# comment kept\n[package]\nname = "x"  # trailing\n\n[dependencies]\nabc = "*"\n';

describe('setContentHash', () => {
  it('appends a [signing] table, leaving every other byte as it was', () => {
    expect(setContentHash(MANIFEST, HASH)).toBe(`${MANIFEST}\n[signing]\ncontent_hash = "${HASH}"\n`);
  });

  it('ends an unterminated last line before appending', () => {
    expect(setContentHash('[package]\nname = "x"', HASH)).toBe(
      `[package]\nname = "x"\n\n[signing]\ncontent_hash = "${HASH}"\n`,
    );
  });

  it('keeps CRLF line endings', () => {
    const crlf = MANIFEST.replaceAll('\n', '\r\n');
    expect(setContentHash(crlf, HASH)).toBe(`${crlf}\r\n[signing]\r\ncontent_hash = "${HASH}"\r\n`);
  });

  it('replaces an existing value in place, keeping its comment and the tables after it', () => {
    const text = `[package]\nname = "x"\n\n[signing] # filled by build\ncontent_hash = '${OLD}' # do not edit\n\n[dependencies]\nabc = "*"\n`;
    expect(setContentHash(text, HASH)).toBe(text.replace(`'${OLD}'`, `"${HASH}"`));
  });

  it('inserts the key under a [signing] header that has none', () => {
    const text = '[signing]\n\n[package]\nname = "x"\n';
    expect(setContentHash(text, HASH)).toBe(`[signing]\ncontent_hash = "${HASH}"\n\n[package]\nname = "x"\n`);
  });

  it('only edits the [signing] table: a content_hash-looking line elsewhere stays', () => {
    const text = `[package]\nname = "x"\ndescription = "content_hash = '${OLD}'"\n\n[signing]\ncontent_hash = "${OLD}"\n`;
    const out = setContentHash(text, HASH);
    expect(out).toContain(`description = "content_hash = '${OLD}'"`);
    expect(out.endsWith(`[signing]\ncontent_hash = "${HASH}"\n`)).toBe(true);
  });

  it('replaces the value of a dotted key or an inline table', () => {
    expect(setContentHash(`signing.content_hash = "${OLD}"\n[package]\n`, HASH)).toBe(
      `signing.content_hash = "${HASH}"\n[package]\n`,
    );
    expect(setContentHash(`signing = { content_hash = "${OLD}" }\n`, HASH)).toBe(
      `signing = { content_hash = "${HASH}" }\n`,
    );
  });

  it('throws rather than write a manifest whose hash would not read back', () => {
    expect(() => setContentHash('signing = {}\n', HASH)).toThrow(/could not set \[signing\] content_hash/);
  });
});
