import type { SearchEntry } from './search-entry.ts';

/**
 * Field weights (docs/registry-search.md "Ranking"): exact name > a name word > title >
 * keywords > description. A query word adds the weight of every field it matches; the exact
 * name bonus beats any sum, and each weight beats the sum of all the ones below it, so for a
 * one-word query the order is exactly the field order.
 */
export const WEIGHTS = { exactName: 1_000_000, name: 1000, title: 100, keywords: 10, description: 1 } as const;

/** A parsed `q`: the whole text (for the exact-name match) and its words. */
export interface TextQuery {
  whole: string;
  words: readonly string[];
}

/**
 * The score of `entry` for `query`, or 0 when some query word matches none of its fields (every
 * word must match: adding a word narrows the result). A word matches a field when one of the
 * field's words starts with it (`claim` matches `claims`).
 */
export function scoreEntry(entry: SearchEntry, query: TextQuery): number {
  let score = entry.name === query.whole ? WEIGHTS.exactName : 0;
  for (const word of query.words) {
    const probe = ` ${word}`;
    let wordScore = 0;
    if (entry.nameText.includes(probe)) wordScore += WEIGHTS.name;
    if (entry.titleText.includes(probe)) wordScore += WEIGHTS.title;
    if (entry.keywordText.includes(probe)) wordScore += WEIGHTS.keywords;
    if (entry.descriptionText.includes(probe)) wordScore += WEIGHTS.description;
    if (wordScore === 0) return 0;
    score += wordScore;
  }
  return score;
}
