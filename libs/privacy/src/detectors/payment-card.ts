import { luhnValid } from '../checksums.ts';
import type { Detector, TextSpan } from '../span.ts';

/**
 * Payment card numbers (PANs): 13 to 19 digits, written together or in groups separated by one
 * space or dash, with a known issuer prefix and a valid Luhn check digit. Found: Visa (4), Mastercard
 * (51-55, 2221-2720), American Express (34, 37), Discover (6011, 644-649, 65), Diners (300-305, 36,
 * 38), JCB (3528-3589), UnionPay (62). Missed: other schemes' prefixes (Maestro 50/56-58, Mir 2200-2204),
 * numbers split by anything other than spaces or dashes, and partial numbers (`ending 1111`).
 */
const CANDIDATE = /(?<![\d-])\d(?:[ -]?\d){12,22}(?![\d-])/g;

const ISSUERS: ReadonlyArray<{ prefix: RegExp; lengths: readonly number[] }> = [
  { prefix: /^4/, lengths: [13, 16, 19] },
  { prefix: /^(?:5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16] },
  { prefix: /^3[47]/, lengths: [15] },
  { prefix: /^(?:6011|64[4-9]|65)/, lengths: [16, 17, 18, 19] },
  { prefix: /^(?:30[0-5]|36|38)/, lengths: [14, 15, 16, 17, 18, 19] },
  { prefix: /^35(?:2[89]|[3-8]\d)/, lengths: [16, 17, 18, 19] },
  { prefix: /^62/, lengths: [16, 17, 18, 19] },
];

export function isCardNumber(digits: string): boolean {
  return ISSUERS.some((i) => i.prefix.test(digits) && i.lengths.includes(digits.length)) && luhnValid(digits);
}

export const paymentCardDetector: Detector = {
  category: 'payment_card',
  detect: (text) => {
    const spans: TextSpan[] = [];
    for (const match of text.matchAll(CANDIDATE)) {
      const end = cardEnd(match[0]);
      if (end !== null) spans.push({ start: match.index, end: match.index + end });
    }
    return spans;
  },
};

/**
 * Where the card in a run of digits ends, or null. The run may carry more digits than the card
 * (`4111 1111 1111 1111 2024`): the whole run first, then each shorter run ending at a separator.
 * One separator kind only (`4111 1111-1111 1111` is several numbers). Linear in the run: hostile
 * input (`1 1 1 1 ...`) costs no more than a paragraph of prose.
 */
function cardEnd(run: string): number | null {
  const digits = run.replace(/\D/g, '');
  const issuers = ISSUERS.filter((i) => i.prefix.test(digits));
  if (issuers.length === 0) return null;
  const cuts: Array<{ end: number; count: number }> = [];
  let count = 0;
  let firstSeparator: string | null = null;
  for (let i = 0; i < run.length; i++) {
    const c = run[i]!;
    if (c >= '0' && c <= '9') {
      count += 1;
      continue;
    }
    if (firstSeparator !== null && c !== firstSeparator) break;
    firstSeparator = c;
    cuts.push({ end: i, count });
  }
  if (cuts.length === 0 || cuts.at(-1)!.end < run.length) {
    const consistent = new Set(run.replace(/\d/g, '')).size <= 1;
    if (consistent) cuts.push({ end: run.length, count: digits.length });
  }
  for (let k = cuts.length - 1; k >= 0; k--) {
    const cut = cuts[k]!;
    if (cut.count < 13) break;
    if (cut.count > 19 || !issuers.some((i) => i.lengths.includes(cut.count))) continue;
    if (luhnValid(digits.slice(0, cut.count))) return cut.end;
  }
  return null;
}
