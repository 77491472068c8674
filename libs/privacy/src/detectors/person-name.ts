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
 * Off by default ([gateway] categories): it is a heuristic, and it costs about 20 ms per KB of
 * text on a small machine, where the pattern detectors cost well under 1 ms.
 */
export async function loadPersonNameDetector(): Promise<Detector> {
  const nlp = ((await import('compromise')) as unknown as { default: Nlp }).default;
  return {
    category: 'person_name',
    detect: (text) =>
      nlp(text)
        .people()
        .json({ offset: true })
        .flatMap((person): TextSpan[] => {
          const offset = person.offset;
          if (offset === undefined) return [];
          const span = trimName(text, offset.start, offset.start + offset.length);
          return span === null ? [] : [span];
        }),
  };
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
