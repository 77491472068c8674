import {
  DEFAULT_CLAIM_NUMBER_PATTERNS,
  DEFAULT_PII_CATEGORIES,
  DEFAULT_POLICY_NUMBER_PATTERNS,
} from '@agent-platform/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPiiDetector, type PiiDetector } from './pii-detector.ts';
import { corpusMessage, leakedValues } from './testing/pii-corpus.ts';
import { createTokenVault } from './token-vault.ts';

let detector: PiiDetector;
beforeAll(async () => {
  detector = await createPiiDetector({
    categories: DEFAULT_PII_CATEGORIES,
    policyNumberPatterns: DEFAULT_POLICY_NUMBER_PATTERNS,
    claimNumberPatterns: DEFAULT_CLAIM_NUMBER_PATTERNS,
  });
});

/** Ids from a fixed sequence, so collisions can be forced. */
const sequence = (...ids: string[]) => {
  let i = 0;
  return () => ids[i++ % ids.length]!;
};

describe('the token vault of one request', () => {
  it('replaces each value by a token of the form [[PII:<LABEL>:<4 hex>]], the same value by the same token', () => {
    const vault = createTokenVault({ detector });
    const out = vault.tokenise(
      'Email a@example.com, again a@example.com, or b@example.com; card 4111 1111 1111 1111.',
    );
    const tokens = out.match(/\[\[PII:[A-Z_]+:[0-9a-f]{4}\]\]/g) ?? [];
    expect(tokens).toHaveLength(4);
    expect(tokens[0]).toMatch(/^\[\[PII:EMAIL:/);
    expect(tokens[0]).toBe(tokens[1]);
    expect(tokens[2]).not.toBe(tokens[0]);
    expect(tokens[3]).toMatch(/^\[\[PII:CARD:/);
    expect(out).not.toContain('@example.com');
    expect(vault.tokenised()).toEqual({ count: 3, categories: { email: 2, payment_card: 1 } });
  });

  it('draws new random ids in every vault: tokens cannot be linked across requests', () => {
    const tokens = new Set(
      Array.from({ length: 20 }, () => createTokenVault({ detector }).tokenise('a@example.com')),
    );
    expect(tokens.size).toBeGreaterThan(15);
  });

  it('hydrates the corpus back exactly, and counts each token restored', () => {
    const vault = createTokenVault({ detector });
    const message = corpusMessage();
    const tokenised = vault.tokenise(message);
    expect(leakedValues(tokenised)).toEqual([]);
    expect(vault.hydrate(tokenised)).toBe(message);
    expect(vault.restored().count).toBe(vault.tokenised().count);
  });

  it('hydrates the slips models make copying a token, and leaves unknown tokens alone', () => {
    const vault = createTokenVault({ detector, randomId: sequence('7f3a') });
    expect(vault.tokenise('a@example.com')).toBe('[[PII:EMAIL:7f3a]]');
    expect(
      vault.hydrate(
        '[PII:EMAIL:7f3a] / PII:email:7F3A / [[ PII:EMAIL:7f3a ]] / [[PII:EMAIL:0000]] / PII:EMAIL:7f3ab',
      ),
    ).toBe('a@example.com / a@example.com / a@example.com / [[PII:EMAIL:0000]] / PII:EMAIL:7f3ab');
  });

  it('escapes values for the inside of a JSON string (tool-call arguments)', () => {
    const vault = createTokenVault({ detector, randomId: sequence('0001') });
    const token = vault.tokenise('12 Oak Rd, Apt 4B');
    const args = JSON.stringify({ address: token, note: 'x' });
    const hydrated = vault.hydrate(args.replace(token, token), { json: true });
    expect(JSON.parse(hydrated)).toEqual({ address: '12 Oak Rd, Apt 4B', note: 'x' });
    const quoted = createTokenVault({ detector, randomId: sequence('0002') });
    quoted.tokenise('DOB: 14/03/1985');
    expect(JSON.parse(quoted.hydrate('{"v":"[[PII:DOB:0002]] \\"ok\\""}', { json: true }))).toEqual({
      v: '14/03/1985 "ok"',
    });
  });

  it('never mints an id already written in the request (a token-shaped text from the customer)', () => {
    const vault = createTokenVault({ detector, randomId: sequence('abcd', 'abcd', 'beef') });
    vault.reserve('I pasted [[PII:EMAIL:abcd]] from another chat');
    expect(vault.tokenise('a@example.com')).toBe('[[PII:EMAIL:beef]]');
    expect(vault.hydrate('[[PII:EMAIL:abcd]] [[PII:EMAIL:beef]]')).toBe('[[PII:EMAIL:abcd]] a@example.com');
  });

  it('hydrates streamed text however the tokens are cut into pieces', () => {
    const vault = createTokenVault({ detector });
    const message = `Dear customer, ${corpusMessage()} Pay soon. [see note] PII: none.`;
    const tokenised = vault.tokenise(message);
    for (const size of [1, 2, 3, 5, 7, 11, 40]) {
      const emitted: string[] = [];
      const stream = vault.streamHydrator((text) => emitted.push(text));
      for (let i = 0; i < tokenised.length; i += size) stream.push(tokenised.slice(i, i + size));
      stream.flush();
      expect(emitted.join(''), `pieces of ${size}`).toBe(message);
      // No piece the client sees ever holds a token or a part of one.
      for (const piece of emitted) expect(piece).not.toMatch(/\[\[PII|PII:[A-Z_]+:/);
    }
  });
});
