import { sqliteJsonField } from './sqlite-layout.ts';

/**
 * Collection, log and field names end up inside SQL text (table names, JSON paths, index
 * names), where parameters cannot be bound. They come from our code, not from users, but a
 * typo or a future caller passing user input must fail loudly rather than inject SQL, so every
 * name is checked against a strict identifier pattern before it is spliced in.
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/i;
const MAX_IDENTIFIER_LENGTH = 63;

export function assertSqlName(kind: 'collection' | 'log' | 'field', name: string): string {
  if (typeof name !== 'string' || name.length > MAX_IDENTIFIER_LENGTH || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `embedded store: invalid ${kind} name ${JSON.stringify(name)} ` +
        `(expected letters, digits and '_', not starting with a digit, at most ${MAX_IDENTIFIER_LENGTH} chars)`,
    );
  }
  return name;
}

/** Double-quotes an identifier that `assertSqlName` (or our own prefixing) already vetted. */
export function quoteIdent(name: string): string {
  return `"${name}"`;
}

/**
 * The SQL expression reading a top-level field of the JSON `body` column. Index definitions and
 * queries must use the exact same text for SQLite to pick the expression index, so both call
 * this one function.
 */
export function jsonField(field: string): string {
  return sqliteJsonField(assertSqlName('field', field));
}
