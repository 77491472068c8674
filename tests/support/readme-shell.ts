import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Reads a README or guide section's `sh` blocks as the commands a user types, so that an
// end-to-end test can run exactly those commands and check the answers the text shows after them
// (`# => ...`). Sections are looked up by heading in README.md, then in docs/guides/*.md.
// Only the small shell subset the README uses is understood; anything else is an error naming the
// line, so a README edit the test cannot follow fails loudly instead of being skipped.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where walkthrough sections live, relative to the repository root, in the order searched. */
async function walkthroughFiles(): Promise<string[]> {
  const guides = (await readdir(join(ROOT, 'docs', 'guides'))).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...guides.map((f) => `docs/guides/${f}`)];
}

/** One command of a README `sh` block. */
export interface ReadmeCommand {
  /** The command as written, continuation lines joined, without its heredoc body. */
  text: string;
  /** Line of the command in `file`, for messages. */
  line: number;
  /** The file the command is in, relative to the repository root (README.md or docs/guides/<guide>.md). */
  file: string;
  /** A heredoc (`<<'TOML'` or `<<TOML`) the command reads: its body, and whether it is expanded. */
  heredoc?: { body: string; expand: boolean };
  /** The README's answer after the command (`# => ...` and its indented continuation lines). */
  answer?: string;
}

/**
 * The lines of the section headed `<title>` (at level 1 to 3) in README.md or a guide, to the next
 * heading of its level or higher, with its file and the line of its heading.
 */
export async function readmeSection(title: string): Promise<{ lines: string[]; firstLine: number; file: string }> {
  for (const file of await walkthroughFiles()) {
    const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n');
    // A heading is a `#` line outside fenced code (a `# comment` in a sh block is not one).
    let fenced = false;
    const heading = lines.map((l) => {
      if (l.trimStart().startsWith('```')) fenced = !fenced;
      return !fenced && /^#{1,3} /.test(l);
    });
    const start = lines.findIndex((l, i) => heading[i] === true && l.replace(/^#{1,3} /, '') === title);
    if (start < 0) continue;
    // To the next heading of the same or a higher level (a guide titled like its one section spans the file).
    const level = (i: number): number => /^#+/.exec(lines[i] ?? '')![0].length;
    const end = lines.findIndex((_l, i) => i > start && heading[i] === true && level(i) <= level(start));
    return { lines: lines.slice(start, end < 0 ? undefined : end), firstLine: start + 1, file };
  }
  throw new Error(`neither README.md nor docs/guides/*.md has a section '${title}'`);
}

/** The commands of the section headed `<title>` (README.md or a guide), in order. */
export async function readmeCommands(title: string): Promise<ReadmeCommand[]> {
  const { lines, firstLine, file } = await readmeSection(title);
  return sectionCommands(lines, firstLine, file);
}

/** The commands of the ```sh blocks among `lines` (the first of which is README line `firstLine`). */
export function sectionCommands(lines: readonly string[], firstLine = 1, file = 'README.md'): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  let inBlock = false;
  let answering = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    const line = firstLine + i;
    if (!inBlock) {
      inBlock = raw.trim() === '```sh';
      continue;
    }
    if (raw.trim() === '```') {
      inBlock = false;
      answering = false;
      continue;
    }
    const trimmed = raw.trim();
    if (trimmed.startsWith('# =>')) {
      const last = commands.at(-1);
      if (last === undefined || last.answer !== undefined) throw new Error(`${file}:${line}: an answer (# =>) with no command before it`);
      last.answer = trimmed.slice(4).trim();
      answering = true;
      continue;
    }
    if (answering && /^#\s{2,}/.test(trimmed)) {
      const last = commands.at(-1)!;
      last.answer = `${last.answer ?? ''}\n${trimmed.slice(1).trim()}`;
      continue;
    }
    answering = false;
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    let text = raw.trimEnd();
    while (text.endsWith('\\')) {
      i++;
      text = `${text.slice(0, -1)}\n${(lines[i] ?? '').trimEnd()}`;
    }
    const command: ReadmeCommand = { text: text.trim(), line, file };
    const heredoc = /<<('?)([A-Z]+)\1(?:\s|$)/.exec(text);
    if (heredoc !== null) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i] ?? '');
      if (i >= lines.length) throw new Error(`${file}:${line}: heredoc ${heredoc[2]} is never closed`);
      command.heredoc = { body: `${body.join('\n')}\n`, expand: heredoc[1] === '' };
    }
    commands.push(command);
  }
  return commands;
}

/**
 * The words of a simple command or pipeline (`a | b` gives two word lists), as bash would pass
 * them: quotes removed, `$NAME`/`${NAME}` expanded from `vars` (an unknown name is an error),
 * unquoted expansions split on whitespace, `# comments` dropped. `$(...)`, backquotes, globs
 * and `; & < > ( )` are refused: the README's commands do not need them.
 */
export function shellWords(text: string, vars: Readonly<Record<string, string>>): string[][] {
  const pipeline: string[][] = [[]];
  let word = '';
  let started = false;
  const flush = () => {
    if (started) pipeline.at(-1)!.push(word);
    word = '';
    started = false;
  };
  let i = 0;
  const variable = (): string => {
    const braced = text[i + 1] === '{';
    const match = (braced ? /^\$\{([A-Za-z_]\w*)\}/ : /^\$([A-Za-z_]\w*)/).exec(text.slice(i));
    if (match === null) throw new Error(`unsupported shell syntax at '${text.slice(i, i + 10)}' in: ${text}`);
    const value = vars[match[1]!];
    if (value === undefined) throw new Error(`$${match[1]} is not set (in: ${text})`);
    i += match[0].length;
    return value;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      flush();
      i++;
    } else if (c === '#' && !started) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '|') {
      flush();
      pipeline.push([]);
      i++;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new Error(`unclosed ' in: ${text}`);
      word += text.slice(i + 1, close);
      started = true;
      i = close + 1;
    } else if (c === '"') {
      started = true;
      for (i++; text[i] !== '"'; ) {
        if (i >= text.length) throw new Error(`unclosed " in: ${text}`);
        if (text[i] === '\\' && '"\\$`'.includes(text[i + 1] ?? '')) {
          word += text[i + 1];
          i += 2;
        } else if (text[i] === '$') word += variable();
        else if (text[i] === '`') throw new Error(`unsupported shell syntax (\`) in: ${text}`);
        else word += text[i++];
      }
      i++;
    } else if (c === '\\') {
      word += text[i + 1] ?? '';
      started = true;
      i += 2;
    } else if (c === '$') {
      const value = variable();
      const parts = value.split(/\s+/);
      parts.forEach((part, n) => {
        if (n > 0) flush();
        word += part;
        started = started || part !== '';
      });
    } else if (';&<>()`*?[]'.includes(c)) {
      throw new Error(`unsupported shell syntax '${c}' in: ${text}`);
    } else {
      word += c;
      started = true;
      i++;
    }
  }
  flush();
  return pipeline;
}

/** A heredoc body as bash gives it to the command: `$NAME` expanded when the delimiter is unquoted. */
export function heredocText(heredoc: NonNullable<ReadmeCommand['heredoc']>, vars: Readonly<Record<string, string>>): string {
  if (!heredoc.expand) return heredoc.body;
  return heredoc.body.replace(/\\([$\\`])|\$\{?([A-Za-z_]\w*)\}?/g, (whole, escaped: string | undefined, name: string | undefined) => {
    if (escaped !== undefined) return escaped;
    const value = vars[name!];
    if (value === undefined) throw new Error(`$${name} is not set (in a heredoc)`);
    return value;
  });
}

/** A curl command line (words after `curl`) as a request; only the options the README uses. */
export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** `-o FILE`: the answer is saved to FILE (relative to the working directory), not printed. */
  output?: string;
}

export function curlRequest(words: readonly string[]): CurlRequest {
  if (words[0] !== 'curl') throw new Error(`not a curl command: ${words.join(' ')}`);
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  let output: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const value = () => {
      const next = words[++i];
      if (next === undefined) throw new Error(`curl ${w} needs a value`);
      return next;
    };
    if (w === '-s' || w === '-sS' || w === '-S' || w === '-N') continue;
    if (w === '-X') method = value();
    else if (w === '-H') {
      const header = value();
      const colon = header.indexOf(':');
      if (colon < 1) throw new Error(`curl -H '${header}' is not 'Name: value'`);
      headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
    } else if (w === '-d' || w === '--data' || w === '--data-raw') {
      // Several -d are joined with '&', as curl does (form fields, one per option).
      const data = value();
      body = body === undefined ? data : `${body}&${data}`;
    } else if (w === '-u') {
      // -u user:password: HTTP Basic authentication (curl's default for -u).
      const credentials = value();
      if (!credentials.includes(':')) throw new Error(`curl -u without ':password' would prompt for the password`);
      headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    } else if (w === '-o') output = value();
    else if (w.startsWith('-')) throw new Error(`curl option ${w} is not understood by the README runner`);
    else if (url === undefined) url = w;
    else throw new Error(`curl with two URLs: ${url} and ${w}`);
  }
  if (url === undefined) throw new Error(`curl without a URL: ${words.join(' ')}`);
  // curl -d without -X posts, form-encoded unless a content-type is given.
  if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body, ...(output === undefined ? {} : { output }) };
}

/**
 * The README's answer as a pattern over what the command printed: `...` and `<placeholders>`
 * stand for anything, any run of whitespace for any whitespace (or none: the README wraps long
 * JSON), everything else literally. A leading HTTP status (`201 {...}`) is returned apart.
 */
export function answerPattern(answer: string): { status: number | undefined; pattern: RegExp } {
  const status = /^(\d{3}) /.exec(answer);
  const text = status === null ? answer : answer.slice(4);
  const source = text
    .trim()
    .split(/(\.\.\.|<[a-z][a-z ]*>|\s+)/)
    .map((part) => {
      if (part === '...' || /^<[a-z][a-z ]*>$/.test(part)) return '[\\s\\S]*?';
      if (/^\s+$/.test(part)) return '\\s*';
      return part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    })
    .join('');
  return { status: status === null ? undefined : Number(status[1]), pattern: new RegExp(`^${source}$`) };
}
