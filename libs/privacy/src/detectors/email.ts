import type { Detector } from '../span.ts';
import { matchSpans } from '../span.ts';

/**
 * Email addresses: a local part, `@`, and a domain of dot-separated labels ending in a TLD of two
 * or more letters. Found: `john.smith+claims@example.co.uk`, `J_O'NEIL@MAIL.EXAMPLE.COM`.
 * Missed: addresses without a dotted domain (`root@localhost`), written-out forms
 * (`john at example dot com`), quoted local parts.
 */
const EMAIL =
  /(?<![\w.%+'-])[A-Za-z0-9][A-Za-z0-9._%+'-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])/dg;

export const emailDetector: Detector = {
  category: 'email',
  detect: (text) => matchSpans(EMAIL, text, (value) => !value.includes('..')),
};
