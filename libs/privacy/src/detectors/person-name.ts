import { createHash } from 'node:crypto';
import type { Detector, TextSpan } from '../span.ts';

/** What `compromise` gives for `nlp(text).people().json({offset: true})`, as far as it is read here. */
interface PeopleJson {
  offset?: { start: number; length: number };
}
type Nlp = (text: string) => { people(): { json(options: { offset: boolean }): PeopleJson[] } };

/**
 * Person names, found by `compromise` (a maintained English NLP library, pure JavaScript, no model
 * download): its `people()` match, which uses a lexicon of given names and surnames, honorifics
 * (`Mr.`, `Dr.`) and sentence context. Each span is trimmed to its capitalised words (`Li Wei here`
 * -> `Li Wei`) and a lone honorific (`Sir`, `Madam`) is dropped.
 * Found: most English-context names with a common given name (`John Smith`, `Priya Patel`, `Mr.
 * Nguyen`, `Karen O'Brien`). Missed: names it does not know in ambiguous places (`Send it to Rose
 * at ...`), names in lower case, many non-Western names written alone. False positives: capitalised
 * words at the start of a sentence that are also names (`Grace period ...` -> `Grace`, `June`).
 * Off by default ([gateway] categories): it is a heuristic, and a slow one (tens of ms per KB of
 * text on a small machine, where the pattern detectors take about 1 ms per 10 KB). compromise's
 * own cost grows faster than the text on some shapes (a long word of `a.a.a.`, a run of dots or of
 * numbers: 64 KB took seconds), so a text longer than PIECE characters is analysed in pieces of at
 * most PIECE (see `pieces`): the cost stays linear in the text. Each message's spans are
 * remembered by the SHA-256 of its text (offsets only, never the text) for the last CACHE_SIZE
 * messages, so a conversation's history is analysed once per process, not per turn.
 */
export async function loadPersonNameDetector(): Promise<Detector> {
  const nlp = ((await import('compromise')) as unknown as { default: Nlp }).default;
  const cache = new Map<string, TextSpan[]>();
  const analyse = (text: string): TextSpan[] =>
    pieces(text).flatMap((piece) =>
      nlp(text.slice(piece.start, piece.end))
        .people()
        .json({ offset: true })
        .flatMap((person): TextSpan[] => {
          const offset = person.offset;
          if (offset === undefined) return [];
          const start = piece.start + offset.start;
          const span = trimName(text, start, start + offset.length);
          return span === null ? [] : [span];
        }),
    );
  return {
    category: 'person_name',
    detect: (text) => {
      const key = createHash('sha256').update(text).digest('base64');
      let spans = cache.get(key);
      if (spans === undefined) {
        spans = analyse(text);
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
      } else {
        cache.delete(key);
      }
      cache.set(key, spans);
      return spans.map((span) => ({ ...span }));
    },
  };
}

/** Messages whose name spans are remembered (least recently used first out). */
const CACHE_SIZE = 1000;

/** The longest text given to compromise at once: a message of a page or two is one piece. */
export const PIECE = 4000;

/**
 * `text` cut into pieces of at most PIECE characters, each ending at the last paragraph break in
 * its second half, else at the last sentence end there (`.`, `!` or `?` and a space after a word of
 * four or more letters, so `Mr. Nguyen` and `J. Smith` stay whole), else at the last space, else
 * anywhere (a word that long is no name). A name cut in two by a space is missed or shortened:
 * only in a run of PIECE / 2 characters with no sentence end.
 */
function pieces(text: string): TextSpan[] {
  const found: TextSpan[] = [];
  let start = 0;
  while (text.length - start > PIECE) {
    const half = text.slice(start + PIECE / 2, start + PIECE);
    const cut = lastEnd(half, /\n/g) ?? lastEnd(half, /\p{L}{4}[.!?]["')\]]*\s/gu) ?? lastEnd(half, /\s/g);
    const end = start + PIECE / 2 + (cut ?? half.length);
    found.push({ start, end });
    start = end;
  }
  found.push({ start, end: text.length });
  return found;
}

/** Where the last match of `pattern` in `text` ends, or null. */
function lastEnd(text: string, pattern: RegExp): number | null {
  let end: number | null = null;
  for (const match of text.matchAll(pattern)) end = match.index + match[0].length;
  return end;
}

const HONORIFICS = new Set(['sir', 'madam', 'mr', 'mrs', 'ms', 'miss', 'dr', 'prof', 'dear', 'mx']);
const PARTICLES = new Set([
  'de',
  'da',
  'del',
  'della',
  'van',
  'von',
  'der',
  'den',
  'bin',
  'al',
  'la',
  'le',
  'du',
  'dos',
]);

/** The name's words: capitalised words (and particles between them), up to the first other word; no trailing punctuation. */
function trimName(text: string, start: number, end: number): TextSpan | null {
  const words = [...text.slice(start, end).matchAll(/[^\s]+/g)];
  let last = -1;
  let names = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]![0].replace(/[.,;:!?)]+$/, '');
    const capitalised = /^\p{Lu}/u.test(word);
    if (!capitalised && !(PARTICLES.has(word.toLowerCase()) && i > 0)) break;
    last = i;
    if (capitalised && !HONORIFICS.has(word.toLowerCase().replace(/\.$/, ''))) names += 1;
  }
  if (last < 0 || names === 0) return null;
  const lastWord = words[last]!;
  const trimmed = lastWord[0].replace(/[.,;:!?)]+$/, '');
  return { start: start + words[0]!.index, end: start + lastWord.index + trimmed.length };
}
