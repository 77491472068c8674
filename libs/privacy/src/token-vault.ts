import { randomBytes } from 'node:crypto';
import type { PiiCategory } from '@agent-platform/contracts';
import type { PiiDetector } from './pii-detector.ts';

/** The label of each category inside a token: `[[PII:EMAIL:7f3a]]`. */
export const TOKEN_LABELS: Readonly<Record<PiiCategory, string>> = {
  policy_number: 'POLICY',
  claim_number: 'CLAIM',
  national_id: 'NATIONAL_ID',
  payment_card: 'CARD',
  bank_account: 'BANK_ACCOUNT',
  email: 'EMAIL',
  phone: 'PHONE',
  date_of_birth: 'DOB',
  address: 'ADDRESS',
  person_name: 'NAME',
};
const CATEGORY_OF_LABEL = new Map(
  Object.entries(TOKEN_LABELS).map(([category, label]) => [label, category as PiiCategory]),
);

/**
 * A token as a model writes it back: the exact form, and the slips models make copying it (a
 * bracket dropped, a space inside, upper-case hex). Only ids this request minted are replaced.
 */
const TOKEN_IN_TEXT = /(?:\[{1,2} ?)?PII:([A-Za-z_]+):([0-9a-fA-F]{4})(?![0-9a-fA-F])(?: ?\]{1,2})?/g;
/** What every match of TOKEN_IN_TEXT contains, as written. */
const TOKEN_MARK = 'PII:';
/** A suffix that may still become a token as more streamed text arrives. */
const TOKEN_PREFIX =
  /^(?:\[{1,2} ?)?(?:P(?:I(?:I(?::(?:[A-Za-z_]+(?::(?:[0-9a-fA-F]{0,4}(?: ?\]?)?)?)?)?)?)?)?)?$/;
const LONGEST_TOKEN = 40;

export type CategoryCounts = Partial<Record<PiiCategory, number>>;

export interface VaultCounts {
  count: number;
  categories: CategoryCounts;
}

/** Passes streamed text on with tokens restored, holding back a piece that may be half a token. */
export interface StreamHydrator {
  push(piece: string): void;
  /** Sends what is held back (the stream ended). */
  flush(): void;
}

/**
 * The tokens of ONE model request, in the memory of the process making the call and nowhere else
 * (never stored, logged or sent on the bus). The same value always gets the same token within the
 * vault; a new vault draws new random ids, so tokens say nothing about values and cannot be
 * linked across requests.
 */
export interface TokenVault {
  /** Marks token-shaped text already present in the request, so that no minted token can collide with it. */
  reserve(text: string): void;
  /** `text` with every detected value replaced by its token (minting tokens for new values). */
  tokenise(text: string): string;
  /**
   * `text` with every token of this vault replaced by its value; `json`: the values are escaped
   * for the inside of a JSON string (tool-call arguments). Unknown token-shaped text is left as is.
   * Each token put back counts in `restored()`.
   */
  hydrate(text: string, options?: { json?: boolean }): string;
  streamHydrator(emit: (text: string) => void): StreamHydrator;
  /** Distinct values replaced so far, by category. */
  tokenised(): VaultCounts;
  /** Tokens put back by `hydrate` so far (each occurrence counts; streamed pieces do not, their reply is hydrated whole too), by category. */
  restored(): VaultCounts;
}

export interface TokenVaultOptions {
  detector: PiiDetector;
  /** Four lower-case hex digits; default crypto-random. Tests pass a sequence. */
  randomId?: () => string;
}

export function createTokenVault(options: TokenVaultOptions): TokenVault {
  const randomId = options.randomId ?? (() => randomBytes(2).toString('hex'));
  const byValue = new Map<string, string>();
  const byToken = new Map<string, { value: string; category: PiiCategory }>();
  const reserved = new Set<string>();
  const memo = new Map<string, string>();
  const minted: CategoryCounts = {};
  const restored: CategoryCounts = {};

  const mint = (category: PiiCategory, value: string): string => {
    const key = `${category}\u0000${value}`;
    const known = byValue.get(key);
    if (known !== undefined) return known;
    const label = TOKEN_LABELS[category];
    let id = randomId().toLowerCase();
    for (let attempt = 0; byToken.has(`${label}:${id}`) || reserved.has(`${label}:${id}`); attempt++) {
      if (attempt > 1000) throw new Error(`no free token id for ${label}`);
      id = randomId().toLowerCase();
    }
    byToken.set(`${label}:${id}`, { value, category });
    const token = `[[PII:${label}:${id}]]`;
    byValue.set(key, token);
    minted[category] = (minted[category] ?? 0) + 1;
    return token;
  };

  const tokenise = (text: string): string => {
    const cached = memo.get(text);
    if (cached !== undefined) return cached;
    const spans = options.detector.detect(text);
    let out = '';
    let at = 0;
    for (const span of spans) {
      out += text.slice(at, span.start) + mint(span.category, text.slice(span.start, span.end));
      at = span.end;
    }
    out += text.slice(at);
    memo.set(text, out);
    return out;
  };

  // Every token contains `PII:` as written (TOKEN_IN_TEXT is case-sensitive there): text without
  // it, most of a conversation, skips the expression.
  const hydrateText = (text: string, json: boolean, count: boolean): string =>
    !text.includes(TOKEN_MARK)
      ? text
      : text.replace(TOKEN_IN_TEXT, (whole, label: string, id: string) => {
          const entry = byToken.get(`${label.toUpperCase()}:${id.toLowerCase()}`);
          if (entry === undefined) return whole;
          if (count) restored[entry.category] = (restored[entry.category] ?? 0) + 1;
          return json ? JSON.stringify(entry.value).slice(1, -1) : entry.value;
        });

  return {
    reserve(text) {
      if (!text.includes(TOKEN_MARK)) return;
      for (const match of text.matchAll(TOKEN_IN_TEXT)) {
        const label = match[1]!.toUpperCase();
        if (CATEGORY_OF_LABEL.has(label)) reserved.add(`${label}:${match[2]!.toLowerCase()}`);
      }
    },
    tokenise,
    hydrate: (text, hydrateOptions = {}) => hydrateText(text, hydrateOptions.json === true, true),
    streamHydrator(emit) {
      const hydrate = (text: string): string => hydrateText(text, false, false);
      let held = '';
      return {
        push(piece) {
          held += piece;
          const cut = partialTokenStart(held);
          const ready = held.slice(0, cut);
          held = held.slice(cut);
          if (ready !== '') emit(hydrate(ready));
        },
        flush() {
          if (held !== '') emit(hydrate(held));
          held = '';
        },
      };
    },
    tokenised: () => countsOf(minted),
    restored: () => countsOf(restored),
  };
}

/** Where the held-back tail of streamed text starts: the earliest position from which it could still grow into a token. */
function partialTokenStart(text: string): number {
  for (let i = Math.max(0, text.length - LONGEST_TOKEN); i < text.length; i++) {
    const c = text[i];
    if ((c === '[' || c === 'P') && TOKEN_PREFIX.test(text.slice(i))) return i;
  }
  return text.length;
}

function countsOf(categories: CategoryCounts): VaultCounts {
  return { count: Object.values(categories).reduce((sum, n) => sum + n, 0), categories: { ...categories } };
}
