import {
  DEFAULT_CLAIM_NUMBER_PATTERNS,
  DEFAULT_PII_CATEGORIES,
  DEFAULT_POLICY_NUMBER_PATTERNS,
  type PiiCategory,
} from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import { PIECE } from './detectors/person-name.ts';
import { createPiiDetector } from './pii-detector.ts';
import { corpusMessage, NAME_CORPUS, PII_CORPUS } from './testing/pii-corpus.ts';

const options = (categories: readonly PiiCategory[] = DEFAULT_PII_CATEGORIES) => ({
  categories,
  policyNumberPatterns: DEFAULT_POLICY_NUMBER_PATTERNS,
  claimNumberPatterns: DEFAULT_CLAIM_NUMBER_PATTERNS,
});

describe('the PII detector', () => {
  it('finds every value of the corpus, with its category, and nothing else', async () => {
    const detector = await createPiiDetector(options());
    const text = corpusMessage();
    const found = detector
      .detect(text)
      .map((s) => ({ category: s.category, value: text.slice(s.start, s.end) }));
    expect(found).toEqual(PII_CORPUS.map(({ category, value }) => ({ category, value })));
  });

  it('lets the detector with a checksum win an overlap: a Luhn-valid card is not a phone number', async () => {
    const detector = await createPiiDetector(options());
    const text = 'call me on 378282246310005';
    expect(detector.detect(text)).toEqual([{ category: 'payment_card', start: 11, end: 26 }]);
    // With cards off, the same digits are a cued phone number.
    const noCards = await createPiiDetector(
      options(DEFAULT_PII_CATEGORIES.filter((c) => c !== 'payment_card')),
    );
    expect(noCards.detect(text)).toEqual([{ category: 'phone', start: 11, end: 26 }]);
  });

  it('runs only the configured categories', async () => {
    const detector = await createPiiDetector(options(['email']));
    expect(detector.categories).toEqual(['email']);
    expect(detector.detect('a@example.com, 4111 1111 1111 1111').map((s) => s.category)).toEqual(['email']);
  });

  it('finds names only when person_name is configured (compromise)', async () => {
    const text = corpusMessage(NAME_CORPUS);
    expect((await createPiiDetector(options())).detect(text)).toEqual([]);
    const detector = await createPiiDetector(options([...DEFAULT_PII_CATEGORIES, 'person_name']));
    expect(detector.detect(text).map((s) => text.slice(s.start, s.end))).toEqual(
      NAME_CORPUS.map((e) => e.value),
    );
    // Near misses: lower case, and a lone form of address.
    expect(detector.detect('dear sir or madam, the storm hit on tuesday')).toEqual([]);
    expect(detector.detect('Dear Sir or Madam,')).toEqual([]);
  });

  it('finds every name in a message longer than one piece given to compromise (cut at sentence ends)', async () => {
    const detector = await createPiiDetector(options(['person_name']));
    for (const separator of [' ', '\n']) {
      const copies = Math.ceil((3 * PIECE) / corpusMessage(NAME_CORPUS).length);
      const text = Array.from({ length: copies }, () => corpusMessage(NAME_CORPUS)).join(separator);
      expect(text.length).toBeGreaterThan(3 * PIECE);
      const names = detector.detect(text).map((s) => text.slice(s.start, s.end));
      expect(names).toEqual(Array.from({ length: copies }, () => NAME_CORPUS.map((e) => e.value)).flat());
    }
  });

  it('leaves ordinary insurance talk alone', async () => {
    const detector = await createPiiDetector(options());
    for (const text of [
      'Hello, world!',
      'A tree fell on my car on 14/03/2024 at 10:30.',
      'Claim 42 is approved; the deductible is 500 dollars.',
      'hold: claim 31',
      'The policy covers floods up to 250000 USD since 2019.',
      'Call us back within 30 days.',
      'Version 2.4.1 of the app crashed 3 times.',
    ]) {
      expect(detector.detect(text), text).toEqual([]);
    }
  });

  it('scans a text it has seen once: the same frozen spans again, whatever a caller tried on them', async () => {
    const detector = await createPiiDetector(options());
    const text = corpusMessage();
    const first = detector.detect(text);
    expect(() => (first[0] as { start: number }).start = 0).toThrow(TypeError);
    const again = detector.detect(`${text.slice(0, 10)}${text.slice(10)}`);
    expect(again).toBe(first);
    expect(again.map((s) => text.slice(s.start, s.end))).toEqual(PII_CORPUS.map(({ value }) => value));
  });
});
