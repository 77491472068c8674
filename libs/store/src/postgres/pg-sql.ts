/**
 * The pure half of the adapter: names, field expressions, filters, paging. Nothing here talks
 * to a server.
 *
 * Collection, log and field names end up inside SQL text (table and index names, JSON paths),
 * where parameters cannot be bound: like the embedded adapter's `sql-names.ts`, each is checked
 * against a strict identifier pattern first, then double-quoted.
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/i;
/** PostgreSQL truncates identifiers past 63 bytes; `c_`/`l_` prefixes and index names add some. */
const MAX_IDENTIFIER_LENGTH = 48;

export function assertPgName(kind: 'collection' | 'log' | 'field' | 'schema', name: string): string {
  if (typeof name !== 'string' || name.length > MAX_IDENTIFIER_LENGTH || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `postgres store: invalid ${kind} name ${JSON.stringify(name)} ` +
        `(expected letters, digits and '_', not starting with a digit, at most ${MAX_IDENTIFIER_LENGTH} chars)`,
    );
  }
  return name;
}

/** Double-quotes an identifier that `assertPgName` (or our own prefixing) already vetted. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The SQL expression of a top-level field of the JSONB column `column`: SQL NULL for a missing
 * field and for a JSON null alike, so `IS NULL` is the port's "null matches missing or null",
 * and a unique index on it never makes two absent (or null) values collide. Index definitions,
 * filters and sorts all use this exact text, so PostgreSQL can use the expression indexes.
 */
export function fieldExpr(column: 'doc' | 'entry', field: string): string {
  return `(NULLIF(${column} -> '${assertPgName('field', field)}', 'null'::jsonb))`;
}

export interface SqlConditions {
  clauses: string[];
  params: unknown[];
}

/**
 * The port's equality filter. Values are compared as JSONB (`$n::jsonb`): numbers compare
 * numerically (1 = 1.0), booleans only equal booleans, strings only strings. `undefined`
 * values are ignored, like an absent key. `params` is appended to (placeholders continue).
 */
export function whereConditions(column: 'doc' | 'entry', where: object | undefined, params: unknown[]): string[] {
  const clauses: string[] = [];
  for (const [field, value] of Object.entries(where ?? {})) {
    if (value === undefined) continue;
    const expr = fieldExpr(column, field);
    if (value === null) {
      clauses.push(`${expr} IS NULL`);
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      params.push(JSON.stringify(value));
      clauses.push(`${expr} = $${params.length}::jsonb`);
    } else {
      throw new TypeError(`postgres store: where.${field} must be a string, number, boolean or null`);
    }
  }
  return clauses;
}

export function whereSql(clauses: readonly string[]): string {
  return clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`;
}

/** LIMIT/OFFSET with validation, both bound as parameters. */
export function pageSql(limit: number | undefined, offset: number | undefined, params: unknown[]): string {
  let sql = '';
  if (limit !== undefined) {
    params.push(checkCount('limit', limit));
    sql += ` LIMIT $${params.length}`;
  }
  if (offset !== undefined && checkCount('offset', offset) > 0) {
    params.push(offset);
    sql += ` OFFSET $${params.length}`;
  }
  return sql;
}

function checkCount(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`postgres store: ${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/**
 * The JSON object to store, as text for a `$n::jsonb` parameter, and the parsed copy returned to
 * the caller (a `Date` comes back as its ISO text, `undefined` fields vanish, as in the other
 * adapters). JSONB cannot hold the NUL character (`\u0000`) in a string: such a document is
 * refused with a TypeError rather than a server error.
 */
export function encodeJson<T>(value: T, what: string): { text: string; json: T } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be a JSON object`);
  }
  const text = JSON.stringify(value);
  if (text.includes('\\u0000')) throw new TypeError(`${what} holds a NUL character, which PostgreSQL cannot store`);
  return { text, json: JSON.parse(text) as T };
}

/** A document's ttl field as a Date (null: it never expires). */
export function expiryOf(doc: Record<string, unknown>, ttlField: string | undefined, collection: string): Date | null {
  if (ttlField === undefined) return null;
  const raw = doc[ttlField];
  if (raw === undefined || raw === null) return null;
  const ms = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new TypeError(`${collection}: ttl field '${ttlField}' must be an ISO timestamp, got ${JSON.stringify(raw)}`);
  }
  return new Date(ms);
}

/**
 * The DDL of a collection's table `c_<name>` (`table` bare, `schema` unquoted): the table and its
 * expiry index. One definition for `PgCollection` and for restores that create the table.
 */
export function pgCollectionTableSql(schema: string, table: string): { objects: string[]; ddl: string[] } {
  const qualified = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  const expiresIndex = quoteIdent(`${table}__expires_at`);
  return {
    objects: [qualified, `${quoteIdent(schema)}.${expiresIndex}`],
    ddl: [
      `CREATE TABLE IF NOT EXISTS ${qualified} (id text COLLATE "C" PRIMARY KEY, version integer NOT NULL, doc jsonb NOT NULL, expires_at timestamptz)`,
      `CREATE INDEX IF NOT EXISTS ${expiresIndex} ON ${qualified} (expires_at) WHERE expires_at IS NOT NULL`,
    ],
  };
}

/** The DDL of a log's table `l_<name>` (`table` bare). */
export function pgLogTableSql(schema: string, table: string): { objects: string[]; ddl: string[] } {
  const qualified = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  return { objects: [qualified], ddl: [`CREATE TABLE IF NOT EXISTS ${qualified} (seq bigint PRIMARY KEY, entry jsonb NOT NULL)`] };
}

/** The expression index `<table>__<u|i>__<field>` on a collection's (`doc`) or log's (`entry`) field. */
export function pgFieldIndexSql(schema: string, table: string, kind: 'u' | 'i', field: string): { object: string; ddl: string } {
  const name = quoteIdent(`${table}__${kind}__${assertPgName('field', field)}`);
  const column = table.startsWith('l_') ? 'entry' : 'doc';
  return {
    object: `${quoteIdent(schema)}.${name}`,
    ddl: `CREATE ${kind === 'u' ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name} ON ${quoteIdent(schema)}.${quoteIdent(table)} (${fieldExpr(column, field)})`,
  };
}
