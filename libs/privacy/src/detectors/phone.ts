import type { Detector, TextSpan } from '../span.ts';
import { digitsOf, matchSpans } from '../span.ts';

/**
 * Telephone numbers in the shapes people write them:
 * - international: `+44 20 7946 0958`, `+1 (415) 555-0132`, `+33612345678` (8 to 15 digits, E.164);
 * - North American: `(415) 555-0132`, `415-555-0132`, `415.555.0132`, `1-800-555-0199`;
 * - national with a trunk 0 (UK, most of Europe): `020 7946 0958`, `07700 900123`, `06-12345678`;
 * - any run of 7 to 15 digits right after a cue word (`phone`, `tel`, `mobile`, `call me on` ...).
 * Missed: seven-digit local numbers without a cue (`555-0132`), numbers spelt out in words,
 * extensions (`x204` is left in the text). A run that is also a card, an IBAN or a national id is
 * reported as that (the detector with the checksum wins, see pii-detector.ts).
 */
// Either one run of digits, or groups each after a separator: never both optional, so a long run
// of digits cannot be split in every possible way (catastrophic backtracking on hostile input).
const INTERNATIONAL = /(?<![\w+])\+(?:\d{7,15}|\d{1,6}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]\d{1,5}){1,6})(?!\w)/dg;
const NORTH_AMERICAN = /(?<![\w+])(?:1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w-])/dg;
const TRUNK_ZERO = /(?<![\w+])0\d{1,4}(?:[ -]\d{2,4}){1,3}(?![\w-])|(?<![\w+])0[1-9]\d{8,9}(?![\w-])/dg;
const CUED =
  /\b(?:phone|tel(?:ephone)?|mobile|cell(?:phone)?|fax|whatsapp|call(?: me)?(?: on| at)?|reach me (?:on|at)|ring me on)\b[^\d+\n]{0,12}(?<value>\+?\d[\d ().-]{5,20}\d)(?!\w)/dgi;

const digitCount = (min: number, max: number) => (value: string) => {
  const n = digitsOf(value).length;
  return n >= min && n <= max;
};

export const phoneDetector: Detector = {
  category: 'phone',
  detect: (text) => {
    const spans: TextSpan[] = [
      ...matchSpans(INTERNATIONAL, text, digitCount(8, 15)),
      ...matchSpans(NORTH_AMERICAN, text, digitCount(10, 11)),
      ...matchSpans(TRUNK_ZERO, text, digitCount(10, 11)),
      ...matchSpans(CUED, text, digitCount(7, 15)),
    ];
    return spans;
  },
};
