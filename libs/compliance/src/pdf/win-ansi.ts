/**
 * The PDF uses the standard Helvetica fonts (no font file to ship or download), which can only
 * show the WinAnsi (cp1252) characters. Anything else would print as garbage, so text is mapped
 * first: look-alikes for common symbols, accents stripped where the base letter exists, `?` for
 * the rest. The JSON report keeps the original text.
 */

/** The cp1252 characters of 0x80-0x9F; 0x20-0x7E and 0xA0-0xFF are Latin-1 itself. */
const CP1252_EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';

const LOOK_ALIKES: Record<string, string> = {
  '≥': '>=',
  '≤': '<=',
  '≠': '!=',
  '→': '->',
  '←': '<-',
  '↔': '<->',
  '✓': 'yes',
  '✗': 'no',
  '\u2009': ' ',
  '\u202f': ' ',
  '\u2011': '-',
  '\u2010': '-',
  '\u2212': '-',
  '\u2032': "'",
  '\u2033': '"',
};

function encodable(ch: string): boolean {
  const code = ch.codePointAt(0) ?? 0;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || CP1252_EXTRA.includes(ch);
}

export function toWinAnsi(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    if (ch === '\n') out += ch;
    else if (ch === '\t' || ch === '\r') out += ' ';
    else if (encodable(ch)) out += ch;
    else if (LOOK_ALIKES[ch] !== undefined) out += LOOK_ALIKES[ch];
    else {
      // Accented letters outside cp1252 (e.g. ő, ł has no decomposition): the base letter, else `?`.
      const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
      out += base !== '' && [...base].every(encodable) ? base : '?';
    }
  }
  return out;
}
