import type { SearchEntry } from './search-entry.ts';
import { WEIGHTS, WORD_SCORE_BY_FIELDS, type TextQuery } from './search-ranking.ts';

/** The entries a text query matched: their slots (in no particular order) and a score per slot. */
export interface TextMatch {
  positions: readonly number[];
  /** The score of a matched slot; valid only until the next `match` call (the buffer is reused). */
  scoreOf: (position: number) => number;
}

interface Postings {
  slots: number[];
  fields: number[];
}

/**
 * An inverted index of the entries' words, so that a text query costs what it matches rather
 * than a pass over every package (issue 12: p99 <= 50 ms over 10,000 packages). For each word,
 * the slots of the entries holding it, each with the bit set of the fields it occurs in; the words
 * sorted, so that the words starting with a query word are one contiguous range found by binary
 * search.
 *
 * Changed in place, one package at a time (`put`): a publish or a yank costs the words of that
 * package (issue 25: a search never waits for a rebuild of the whole index). A slot is a
 * package's number for the life of the index; the caller owns the numbering.
 */
export class TextIndex {
  private readonly postings = new Map<string, Postings>();
  /** Every word with postings, sorted; `lists[i]` is the postings of `vocabulary[i]`. */
  private vocabulary: string[] = [];
  private lists: Postings[] = [];
  private readonly slotByName = new Map<string, number>();
  // Per-slot scratch, reused by every query (no allocation per package): the fields the current
  // query word matched, the stamp of the word that last touched the slot (so nothing is ever
  // cleared), and the running score.
  private bits = new Uint8Array(0);
  private stamps = new Uint32Array(0);
  private scores = new Float64Array(0);
  private stamp = 0;

  /** The index of `entries`, entry i in slot i (a bulk load: the vocabulary is sorted once). */
  static build(entries: readonly SearchEntry[]): TextIndex {
    const index = new TextIndex();
    entries.forEach((entry, slot) => index.add(slot, entry, false));
    index.vocabulary = [...index.postings.keys()].sort();
    index.lists = index.vocabulary.map((word) => index.postings.get(word)!);
    return index;
  }

  /** Puts `next` in `slot` in place of `previous` (either null: a package appearing or gone). */
  put(slot: number, previous: SearchEntry | null, next: SearchEntry | null): void {
    if (previous !== null) this.remove(slot, previous);
    if (next !== null) this.add(slot, next, true);
  }

  /**
   * The entries that match every query word in some field (a word matches a field when one of
   * the field's words starts with it: `claim` matches `claims`), with their scores: the sum
   * over query words of the weights of the fields each matched, plus the exact-name bonus.
   * Synchronous and not reentrant: the result's scores live in buffers the next call reuses.
   */
  match(query: TextQuery): TextMatch {
    const { bits, scores } = this;
    let positions: number[] = [];
    query.words.forEach((word, i) => {
      const touched = this.touch(word);
      if (i === 0) {
        for (const slot of touched) scores[slot] = WORD_SCORE_BY_FIELDS[bits[slot]!]!;
        positions = touched;
        return;
      }
      // Each later word keeps only the entries every earlier word matched.
      const current = this.stamp;
      positions = positions.filter((slot) => {
        if (this.stamps[slot] !== current) return false;
        scores[slot]! += WORD_SCORE_BY_FIELDS[bits[slot]!]!;
        return true;
      });
    });
    const exact = this.slotByName.get(query.whole);
    if (exact !== undefined && positions.includes(exact)) scores[exact]! += WEIGHTS.exactName;
    return { positions, scoreOf: (position) => scores[position]! };
  }

  /** Marks every slot holding a vocabulary word that starts with `word`; answers them in first-seen order. */
  private touch(word: string): number[] {
    if (this.stamp === 0xffffffff) {
      this.stamps.fill(0);
      this.stamp = 0;
    }
    const current = ++this.stamp;
    const { vocabulary, lists, stamps, bits } = this;
    const touched: number[] = [];
    for (let at = lowerBound(vocabulary, word); at < vocabulary.length && vocabulary[at]!.startsWith(word); at++) {
      const list = lists[at]!;
      for (let k = 0; k < list.slots.length; k++) {
        const slot = list.slots[k]!;
        if (stamps[slot] !== current) {
          stamps[slot] = current;
          bits[slot] = 0;
          touched.push(slot);
        }
        bits[slot]! |= list.fields[k]!;
      }
    }
    return touched;
  }

  /** `sorted` false during a bulk load, which sorts the vocabulary once at the end. */
  private add(slot: number, entry: SearchEntry, sorted: boolean): void {
    this.reserve(slot);
    this.slotByName.set(entry.name, slot);
    for (const [word, fields] of fieldsOf(entry)) {
      let list = this.postings.get(word);
      if (list === undefined) {
        list = { slots: [], fields: [] };
        this.postings.set(word, list);
        if (sorted) {
          const at = lowerBound(this.vocabulary, word);
          this.vocabulary.splice(at, 0, word);
          this.lists.splice(at, 0, list);
        }
      }
      list.slots.push(slot);
      list.fields.push(fields);
    }
  }

  private remove(slot: number, entry: SearchEntry): void {
    if (this.slotByName.get(entry.name) === slot) this.slotByName.delete(entry.name);
    for (const word of fieldsOf(entry).keys()) {
      const list = this.postings.get(word);
      const k = list?.slots.indexOf(slot) ?? -1;
      if (list === undefined || k < 0) continue;
      list.slots.splice(k, 1);
      list.fields.splice(k, 1);
      if (list.slots.length > 0) continue;
      this.postings.delete(word);
      const at = lowerBound(this.vocabulary, word);
      this.vocabulary.splice(at, 1);
      this.lists.splice(at, 1);
    }
  }

  /** Grows the scratch buffers to hold `slot` (doubling, so a bulk load copies them a few times only). */
  private reserve(slot: number): void {
    if (slot < this.bits.length) return;
    const size = Math.max(16, slot + 1, this.bits.length * 2);
    const bits = new Uint8Array(size);
    bits.set(this.bits);
    const stamps = new Uint32Array(size);
    stamps.set(this.stamps);
    const scores = new Float64Array(size);
    scores.set(this.scores);
    this.bits = bits;
    this.stamps = stamps;
    this.scores = scores;
  }
}

/** Each distinct word of `entry` with the bit set of the fields it occurs in. */
function fieldsOf(entry: SearchEntry): Map<string, number> {
  const fields = new Map<string, number>();
  entry.words.forEach((list, field) => {
    for (const word of list) fields.set(word, (fields.get(word) ?? 0) | (1 << field));
  });
  return fields;
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
