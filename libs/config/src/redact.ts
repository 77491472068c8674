/** The spec's redaction placeholder: 8 U+2022 bullets. */
export const REDACTED = '\u2022'.repeat(8);

const SECRET_WORDS = ['secret', 'password', 'passwd', 'token', 'api_key', 'apikey', 'private_key', 'credential'];

/** A URL's userinfo password: `scheme://user:<password>@`. Over-matches odd URLs, never under. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s:@/?#"']*:)([^\s@?#"']+)@/gi;

/**
 * True when a key's value is a secret. Keys ending in `_env` are exempt: they hold the *name* of
 * the environment variable carrying the secret (`api_key_env = "OPENAI_API_KEY"`), and the schema
 * refuses anything that is not a variable name, so a pasted secret never reaches GET /config.
 */
export function isSecretKeyName(name: string): boolean {
  const normalized = name.toLowerCase().replaceAll('-', '_');
  if (normalized.endsWith('_env')) return false;
  return SECRET_WORDS.some((word) => normalized.includes(word));
}

/** A `password=` query parameter of a URL (PostgreSQL connection strings accept one). */
const QUERY_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s"']*[?&]password=)([^\s&#"']+)/gi;

/** Replaces the password of every `scheme://user:password@` URL, and any `?password=` of one, in `text`. */
export function redactUrlPasswords(text: string): string {
  return text
    .replace(URL_PASSWORD, (_match, head: string) => `${head}${REDACTED}@`)
    .replace(QUERY_PASSWORD, (_match, head: string) => `${head}${REDACTED}`);
}

/**
 * The raw TOML text for GET /config with secrets replaced by `REDACTED`: the whole value of any
 * key whose name (or enclosing table's name) looks secret — strings, numbers, every element of
 * an array, every value of an inline table — and the password of any URL userinfo, in values and
 * in comments. Layout and comments are kept. A lexer rather than parse-and-print, because the
 * operator wants to see the file as written.
 */
export function redactConfigText(text: string): string {
  return new TomlRedactor(text).run();
}

class TomlRedactor {
  private i = 0;
  private out = '';
  private tableSecret = false;

  constructor(private readonly text: string) {}

  run(): string {
    while (this.i < this.text.length) {
      const start = this.i;
      this.copyWhile((c) => c === ' ' || c === '\t' || c === '\r' || c === '\n');
      const c = this.peek();
      if (c === '#') this.comment();
      else if (c === '[') this.header();
      else if (c !== undefined) this.keyValue(this.tableSecret);
      // Malformed input: copy a character rather than loop forever.
      if (this.i === start) this.copy(1);
    }
    return this.out;
  }

  private header(): void {
    this.copyWhile((c) => c === '[');
    this.tableSecret = this.key().some(isSecretKeyName);
    this.copyWhile((c) => c === ' ' || c === '\t' || c === ']');
  }

  private keyValue(parentSecret: boolean): void {
    const parts = this.key();
    const secret = parentSecret || parts.some(isSecretKeyName);
    this.skipBlanks();
    if (this.peek() !== '=') return;
    this.copy(1);
    this.skipBlanks();
    this.value(secret);
  }

  /** Copies a dotted key and returns its parts. */
  private key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skipBlanks();
      const c = this.peek();
      if (c === '"' || c === "'") {
        const end = this.stringEnd(this.i);
        parts.push(this.text.slice(this.i + 1, end - 1));
        this.copy(end - this.i);
      } else {
        const start = this.i;
        this.copyWhile((ch) => /[A-Za-z0-9_-]/.test(ch));
        if (this.i === start) return parts;
        parts.push(this.text.slice(start, this.i));
      }
      this.skipBlanks();
      if (this.peek() !== '.') return parts;
      this.copy(1);
    }
  }

  private value(secret: boolean): void {
    const c = this.peek();
    if (c === '"' || c === "'") this.stringValue(secret);
    else if (c === '[') this.container(']', () => this.value(secret));
    else if (c === '{') this.container('}', () => this.keyValue(secret));
    else this.bareValue(secret);
  }

  /** An array or an inline table: items separated by commas, blank lines and comments allowed. */
  private container(close: string, item: () => void): void {
    this.copy(1);
    for (;;) {
      this.skipLayout();
      const c = this.peek();
      if (c === undefined) return;
      if (c === close) {
        this.copy(1);
        return;
      }
      const start = this.i;
      item();
      this.skipLayout();
      if (this.peek() === ',') this.copy(1);
      else if (this.peek() !== close) return;
      if (this.i === start) return;
    }
  }

  private stringValue(secret: boolean): void {
    const end = this.stringEnd(this.i);
    const token = this.text.slice(this.i, end);
    this.i = end;
    if (!secret) {
      this.out += redactUrlPasswords(token);
      return;
    }
    const delimiter = /^("""|'''|"|')/.exec(token)?.[1] ?? '"';
    this.out += `${delimiter}${REDACTED}${delimiter}`;
  }

  /** Numbers, booleans and dates (a date may hold one space: `1979-05-27 07:32:00`). */
  private bareValue(secret: boolean): void {
    const start = this.i;
    while (this.i < this.text.length && !',]}#\r\n'.includes(this.text[this.i] ?? '')) this.i++;
    const raw = this.text.slice(start, this.i);
    const scalar = raw.trimEnd();
    this.out += secret && scalar.length > 0 ? `"${REDACTED}"${raw.slice(scalar.length)}` : raw;
  }

  private comment(): void {
    const start = this.i;
    while (this.i < this.text.length && this.text[this.i] !== '\n' && this.text[this.i] !== '\r') this.i++;
    this.out += redactComment(this.text.slice(start, this.i));
  }

  /** Index just past the string token starting at `start` (basic, literal, or multi-line). */
  private stringEnd(start: number): number {
    const text = this.text;
    const quote = text[start] ?? '"';
    const triple = quote.repeat(3);
    const escapes = quote === '"';
    if (text.startsWith(triple, start)) {
      for (let j = start + 3; j < text.length; j++) {
        if (escapes && text[j] === '\\') j++;
        else if (text.startsWith(triple, j)) {
          // Up to two quotes may sit right before the closing delimiter: `"""a"""""`.
          let end = j + 3;
          while (end < j + 5 && text[end] === quote) end++;
          return end;
        }
      }
      return text.length;
    }
    for (let j = start + 1; j < text.length; j++) {
      const c = text[j];
      if (escapes && c === '\\') j++;
      else if (c === quote) return j + 1;
      else if (c === '\n') return j;
    }
    return text.length;
  }

  private skipBlanks(): void {
    this.copyWhile((c) => c === ' ' || c === '\t');
  }

  private skipLayout(): void {
    for (;;) {
      this.copyWhile((c) => c === ' ' || c === '\t' || c === '\r' || c === '\n');
      if (this.peek() !== '#') return;
      this.comment();
    }
  }

  private peek(): string | undefined {
    return this.text[this.i];
  }

  private copy(n: number): void {
    this.out += this.text.slice(this.i, this.i + n);
    this.i += n;
  }

  private copyWhile(test: (c: string) => boolean): void {
    const start = this.i;
    while (this.i < this.text.length && test(this.text[this.i] ?? '')) this.i++;
    this.out += this.text.slice(start, this.i);
  }
}

/** A commented-out assignment of a secret (`# token = "abc"`) is redacted like a live one. */
function redactComment(comment: string): string {
  const assignment = /^(#+\s*)([A-Za-z0-9_."'-]+)(\s*=\s*)(\S.*?)(\s*)$/.exec(comment);
  if (assignment !== null) {
    const [, lead = '', key = '', equals = '', , tail = ''] = assignment;
    if (key.split('.').some((part) => isSecretKeyName(part.replace(/^["']|["']$/g, '')))) {
      return `${lead}${key}${equals}"${REDACTED}"${tail}`;
    }
  }
  return redactUrlPasswords(comment);
}
