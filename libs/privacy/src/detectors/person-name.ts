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
 * text on a small machine, where the pattern detectors take about 1 ms per 10 KB). Each message's
 * spans are remembered by the SHA-256 of its text (offsets only, never the text) for the last
 * CACHE_SIZE messages, so a conversation's history is analysed once per process, not per turn.
 */
export async function loadPersonNameDetector(): Promise<Detector> {
  const nlp = ((await import('compromise')) as unknown as { default: Nlp }).default;
  const cache = new Map<string, TextSpan[]>();
  const analyse = (text: string): TextSpan[] =>
    nlp(text)
      .people()
      .json({ offset: true })
      .flatMap((person): TextSpan[] => {
        const offset = person.offset;
        if (offset === undefined) return [];
        const span = trimName(text, offset.start, offset.start + offset.length);
        return span === null ? [] : [span];
      });
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
