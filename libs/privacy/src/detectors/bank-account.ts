import { abaRoutingValid, ibanValid } from '../checksums.ts';
import type { Detector, TextSpan } from '../span.ts';
import { digitsOf, matchSpans } from '../span.ts';

/**
 * Bank account identifiers:
 * - IBANs, printed together or in groups of four (`GB82 WEST 1234 5698 7654 32`), upper case,
 *   with the country's length and a valid mod-97 check (ISO 13616 / 7064);
 * - US ABA routing numbers after a cue (`routing`, `ABA`, `RTN`, `transit`) with a valid checksum;
 * - account numbers of 6 to 17 digits after a cue (`account number`, `acct`, `a/c`);
 * - UK sort codes after the cue `sort code` (`12-34-56`).
 * Missed: IBANs in lower case or split other than in groups, account and routing numbers with no
 * cue word before them (a bare run of digits is indistinguishable from any other number), and
 * SWIFT/BIC codes (which name a bank, not a person).
 */
/** Written together, or in groups of four after the first with a shorter last one: one way to read each run. */
const IBAN_GROUPS = /\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)\b/g;
const ROUTING =
  /\b(?:routing|ABA|RTN|transit)(?:\s*(?:number|no\.?|#))?\s*(?:(?:is\b|:|#)\s*)?(?<value>\d{9})(?!\d)/dgi;
const ACCOUNT =
  /\b(?:account|acct|a\/c)\.?(?:\s*(?:number|no\.?|num\.?|#))?\s*(?:(?:is\b|:|#)\s*)?(?<value>\d[\d -]{4,20}\d)(?!\d)/dgi;
const SORT_CODE = /\bsort\s*code\s*(?:(?:is\b|:)\s*)?(?<value>\d{2}[- ]?\d{2}[- ]?\d{2})(?!\d)/dgi;

export const bankAccountDetector: Detector = {
  category: 'bank_account',
  detect: (text) => [
    ...ibanSpans(text),
    ...matchSpans(ROUTING, text, (value) => abaRoutingValid(value)),
    ...matchSpans(ACCOUNT, text, (value) => {
      const n = digitsOf(value).length;
      return n >= 6 && n <= 17;
    }),
    ...matchSpans(SORT_CODE, text),
  ],
};

/** Groups may run into the next word (`... 7654 32 AB`): the longest prefix of groups that is a valid IBAN. */
function ibanSpans(text: string): TextSpan[] {
  const spans: TextSpan[] = [];
  for (const match of text.matchAll(IBAN_GROUPS)) {
    const run = match[0];
    const ends = [run.length, ...[...run.matchAll(/ /g)].map((m) => m.index).reverse()];
    const end = ends.find((e) => ibanValid(run.slice(0, e).replace(/ /g, '')));
    if (end !== undefined) spans.push({ start: match.index, end: match.index + end });
  }
  return spans;
}
