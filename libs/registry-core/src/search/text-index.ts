import type { SearchEntry } from './search-entry.ts';
import { WEIGHTS, WORD_SCORE_BY_FIELDS, type TextQuery } from './search-ranking.ts';

/**
 * An inverted index of the entries' words, so that a text query costs what it matches rather
 * than a pass over every package (issue 12: p99 <= 50 ms over 10,000 packages). For each word,
 * the entries holding it, each with the bit set of the fields it occurs in; the words sorted,
 * so that the words starting with a query word are one contiguous range found by binary search.
 */
export interface TextIndex {
  /**
   * The score of every entry (by position) that matches each query word in some field (a word
   * matches a field when one of the field's words starts with it: `claim` matches `claims`),
   * plus the exact-name bonus. Entries matching fewer words are left out: adding a word narrows.
   */
  match(query: TextQuery): Map<number, number>;
}

interface Postings {
  entries: number[];
  fields: number[];
}

export function buildTextIndex(entries: readonly SearchEntry[]): TextIndex {
  const postings = new Map<string, Postings>();
  const byName = new Map<string, number>();
  entries.forEach((entry, index) => {
    byName.set(entry.name, index);
    const fieldsOf = new Map<string, number>();
    entry.words.forEach((list, field) => {
      for (const word of list) fieldsOf.set(word, (fieldsOf.get(word) ?? 0) | (1 << field));
    });
    for (const [word, fields] of fieldsOf) {
      const list = postings.get(word);
      if (list === undefined) postings.set(word, { entries: [index], fields: [fields] });
      else {
        list.entries.push(index);
        list.fields.push(fields);
      }
    }
  });
  const vocabulary = [...postings.keys()].sort();
  const lists = vocabulary.map((word) => postings.get(word)!);

  /** Field bits per entry for one query word: every vocabulary word it is a prefix of. */
  const fieldsMatching = (word: string): Map<number, number> => {
    const bits = new Map<number, number>();
    for (let at = lowerBound(vocabulary, word); at < vocabulary.length && vocabulary[at]!.startsWith(word); at++) {
      const list = lists[at]!;
      for (let k = 0; k < list.entries.length; k++) {
        const entry = list.entries[k]!;
        bits.set(entry, (bits.get(entry) ?? 0) | list.fields[k]!);
      }
    }
    return bits;
  };

  return {
    match(query) {
      let scores: Map<number, number> | null = null;
      // Each word keeps only the entries every earlier word matched.
      for (const word of query.words) {
        const bits = fieldsMatching(word);
        const next = new Map<number, number>();
        if (scores === null) for (const [entry, fields] of bits) next.set(entry, WORD_SCORE_BY_FIELDS[fields]!);
        else
          for (const [entry, score] of scores) {
            const fields = bits.get(entry);
            if (fields !== undefined) next.set(entry, score + WORD_SCORE_BY_FIELDS[fields]!);
          }
        scores = next;
        if (scores.size === 0) break;
      }
      const result = scores ?? new Map<number, number>();
      const exact = byName.get(query.whole);
      if (exact !== undefined && result.has(exact)) result.set(exact, result.get(exact)! + WEIGHTS.exactName);
      return result;
    },
  };
}

/** The first position in sorted `list` whose value is >= `value`. */
function lowerBound(list: readonly string[], value: string): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (list[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
