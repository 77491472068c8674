import { PII_CATEGORIES, SizedLru, type PiiCategory } from '@agent-platform/contracts';
import { addressDetector } from './detectors/address.ts';
import { bankAccountDetector } from './detectors/bank-account.ts';
import { carrierNumberDetector } from './detectors/carrier-numbers.ts';
import { dateOfBirthDetector } from './detectors/date-of-birth.ts';
import { emailDetector } from './detectors/email.ts';
import { nationalIdDetector } from './detectors/national-id.ts';
import { paymentCardDetector } from './detectors/payment-card.ts';
import { loadPersonNameDetector } from './detectors/person-name.ts';
import { phoneDetector } from './detectors/phone.ts';
import type { Detector, PiiSpan } from './span.ts';

export interface PiiDetectorOptions {
  categories: readonly PiiCategory[];
  policyNumberPatterns: readonly string[];
  claimNumberPatterns: readonly string[];
}

/** Finds personal data in a text; spans never overlap and come in text order. */
export interface PiiDetector {
  readonly categories: readonly PiiCategory[];
  detect(text: string): readonly PiiSpan[];
}

/**
 * Characters of text whose detections one detector remembers. A detector is pure, so the spans of
 * a text never change: a conversation sent to the model again with every turn (the agent's
 * session) is scanned once per text, not once per call (docs/privacy-gateway.md "Where it runs").
 */
const DETECTION_CACHE_CHARS = 8 * 1024 * 1024;

/**
 * When two detectors claim overlapping text, the one earlier here wins: formats with a checksum
 * first (a Luhn-valid card is a card even if it also looks like a phone number), then the
 * carrier's own formats, then the structural ones, the heuristic name detector last.
 */
const PRECEDENCE: readonly PiiCategory[] = [
  'payment_card',
  'bank_account',
  'national_id',
  'policy_number',
  'claim_number',
  'email',
  'date_of_birth',
  'phone',
  'address',
  'person_name',
];

/**
 * The detectors of `categories`. Async because the name detector's library is loaded only when
 * `person_name` is asked for. Throws a SyntaxError for a carrier pattern that does not compile
 * (config validation refuses such a file first).
 */
export async function createPiiDetector(options: PiiDetectorOptions): Promise<PiiDetector> {
  const wanted = new Set(options.categories);
  const detectors: Detector[] = [];
  for (const category of PRECEDENCE) {
    if (!wanted.has(category)) continue;
    detectors.push(await detectorOf(category, options));
  }
  const categories = PII_CATEGORIES.filter((c) => wanted.has(c));
  const cache = new SizedLru<string, readonly PiiSpan[]>(DETECTION_CACHE_CHARS);
  const detect = (text: string): readonly PiiSpan[] => {
    const known = cache.get(text);
    if (known !== undefined) return known;
    // Frozen: every later caller of the same text shares them.
    const spans = Object.freeze(resolve(detectors, text).map((span) => Object.freeze(span)));
    cache.set(text, spans, text.length);
    return spans;
  };
  return { categories, detect: (text) => (text === '' ? [] : detect(text)) };
}

async function detectorOf(category: PiiCategory, options: PiiDetectorOptions): Promise<Detector> {
  switch (category) {
    case 'policy_number':
      return carrierNumberDetector('policy_number', options.policyNumberPatterns);
    case 'claim_number':
      return carrierNumberDetector('claim_number', options.claimNumberPatterns);
    case 'national_id':
      return nationalIdDetector;
    case 'payment_card':
      return paymentCardDetector;
    case 'bank_account':
      return bankAccountDetector;
    case 'email':
      return emailDetector;
    case 'phone':
      return phoneDetector;
    case 'date_of_birth':
      return dateOfBirthDetector;
    case 'address':
      return addressDetector;
    case 'person_name':
      return loadPersonNameDetector();
  }
}

/** Every detector's spans, in precedence order; a span overlapping one already taken is dropped. */
function resolve(detectors: readonly Detector[], text: string): PiiSpan[] {
  // Kept sorted by start; taken spans never overlap, so their ends are sorted too.
  const taken: PiiSpan[] = [];
  for (const detector of detectors) {
    const spans = detector.detect(text).sort((a, b) => a.start - b.start || b.end - a.end);
    for (const span of spans) {
      if (span.end <= span.start) continue;
      const at = firstEndingAfter(taken, span.start);
      const next = taken[at];
      if (next !== undefined && next.start < span.end) continue;
      taken.splice(at, 0, { category: detector.category, start: span.start, end: span.end });
    }
  }
  return taken;
}

/** Index of the first taken span whose end lies after `position` (binary search). */
function firstEndingAfter(taken: readonly PiiSpan[], position: number): number {
  let low = 0;
  let high = taken.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (taken[mid]!.end <= position) low = mid + 1;
    else high = mid;
  }
  return low;
}
