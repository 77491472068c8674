import { parseDocument, type Document } from 'yaml';
import { isTable, type Table } from '../fields.ts';
import { syntaxMessage, WHOLE_FILE, type FileProblems } from '../problems.ts';

const DECODER = new TextDecoder('utf-8', { fatal: true });
const FENCE = /^---[ \t]*$/;

/** The payload as text; a `utf8` problem when the bytes are not UTF-8. A leading BOM is dropped. */
export function decodeText(bytes: Uint8Array, p: FileProblems): string | undefined {
  try {
    return DECODER.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    p.add(WHOLE_FILE, 'utf8', 'must be UTF-8 text');
    return undefined;
  }
}

export interface Frontmatter {
  data: Table;
  /** The markdown after the closing fence, trimmed. */
  body: string;
}

/**
 * Splits a markdown payload into its YAML frontmatter (between a first line `---` and the next
 * `---` line) and its body. YAML 1.2 core schema: dates stay strings, duplicate keys and
 * unbounded alias expansion are errors.
 */
export function splitFrontmatter(text: string, p: FileProblems): Frontmatter | undefined {
  const lines = text.split(/\r?\n/);
  if (!FENCE.test(lines[0] ?? '')) {
    p.add(WHOLE_FILE, 'frontmatter', "must start with a '---' line opening the YAML frontmatter");
    return undefined;
  }
  const close = lines.findIndex((line, i) => i > 0 && FENCE.test(line));
  if (close < 0) {
    p.add(WHOLE_FILE, 'frontmatter', "the YAML frontmatter has no closing '---' line");
    return undefined;
  }
  const doc = parseDocument(lines.slice(1, close).join('\n'), { uniqueKeys: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    const at = error.linePos?.[0];
    // +1: the frontmatter starts on the file's second line, after the opening fence.
    const where = at === undefined ? '' : ` (line ${at.line + 1}, column ${at.col})`;
    p.add(WHOLE_FILE, 'yaml-syntax', `the frontmatter is not valid YAML: ${reason}${where}`);
    return undefined;
  }
  const data = toPlainData(doc);
  if (data === ALIAS_BOMB) {
    p.add(WHOLE_FILE, 'yaml-syntax', `the frontmatter is refused: its aliases expand to more than ${MAX_ALIAS_COUNT} values (a YAML alias bomb)`);
    return undefined;
  }
  if (!isTable(data)) {
    p.add(WHOLE_FILE, 'frontmatter', 'the frontmatter must be a YAML mapping of keys to values');
    return undefined;
  }
  return {
    data,
    body: lines
      .slice(close + 1)
      .join('\n')
      .trim(),
  };
}

/** Alias expansions allowed in one frontmatter: plenty for a hand-written file, far from a billion laughs. */
const MAX_ALIAS_COUNT = 100;
const ALIAS_BOMB = Symbol('alias bomb');

/**
 * The document as plain data, or ALIAS_BOMB when expanding its aliases would pass the limit:
 * `yaml` throws a ReferenceError then, which must become the package's problem, not a 500.
 */
function toPlainData(doc: Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {};
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) return ALIAS_BOMB;
    throw error;
  }
}

/** A JSON payload whose top level is an object. */
export function parseJsonObject(text: string, p: FileProblems): Table | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    p.add(WHOLE_FILE, 'json-syntax', `not valid JSON: ${syntaxMessage(error)}`);
    return undefined;
  }
  if (isTable(value)) return value;
  p.add(WHOLE_FILE, 'type', 'must be a JSON object');
  return undefined;
}
