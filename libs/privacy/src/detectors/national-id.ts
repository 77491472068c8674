import type { Detector } from '../span.ts';
import { matchSpans } from '../span.ts';

/**
 * National identity numbers:
 * - US Social Security numbers written `123-45-6789` or `123 45 6789` (never area 000, 666 or
 *   9xx, group 00 or serial 0000, the SSA's rules), and nine bare digits after `SSN` or
 *   `social security number`;
 * - UK National Insurance numbers `AB123456C` / `AB 12 34 56 C` with HMRC's prefix rules (first
 *   letter not D, F, I, Q, U, V; second not D, F, I, O, Q, U, V; not BG, GB, KN, NK, NT, TN, ZZ).
 * Missed: other countries' identifiers (EU national ids, Canadian SINs, passports, driving
 * licences), SSNs written without separators and without a cue, and the ITIN/EIN ranges.
 */
const SSN = /(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])/dg;
const SSN_CUED =
  /\b(?:SSN|social\s+security(?:\s+(?:number|no\.?|#))?)\s*(?:(?:is\b|:|#)\s*)?(?<value>(?!000|666|9\d\d)\d{3}(?!00)\d{2}(?!0000)\d{4})(?!\d)/dgi;
const NINO = /\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/dg;

export const nationalIdDetector: Detector = {
  category: 'national_id',
  detect: (text) => [...matchSpans(SSN, text), ...matchSpans(SSN_CUED, text), ...matchSpans(NINO, text)],
};
