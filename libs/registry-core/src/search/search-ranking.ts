import { TEXT_FIELDS } from './search-entry.ts';

/**
 * Field weights (docs/registry-search.md "Ranking"): exact name > a name word > title >
 * keywords > description. A query word adds the weight of every field it matches; the exact
 * name bonus beats any sum, and each weight beats the sum of all the ones below it, so for a
 * one-word query the order is exactly the field order.
 */
export const WEIGHTS = { exactName: 1_000_000, name: 1000, title: 100, keywords: 10, description: 1 } as const;

/** The score one query word adds to a package, by the bit set of the fields it matched (bit i = TEXT_FIELDS[i]). */
export const WORD_SCORE_BY_FIELDS: readonly number[] = Array.from({ length: 1 << TEXT_FIELDS.length }, (_, bits) =>
  TEXT_FIELDS.reduce((sum, field, i) => (bits & (1 << i) ? sum + WEIGHTS[field] : sum), 0),
);

/** A parsed `q`: the whole text (for the exact-name match) and its words. */
export interface TextQuery {
  whole: string;
  words: readonly string[];
}
