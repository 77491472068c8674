import { jsonField } from './sql-names.ts';
import type { SqlValue } from './sqlite-handle.ts';

export interface SqlConditions {
  clauses: string[];
  params: SqlValue[];
}

/**
 * Translates the port's equality filter into SQL conditions on the JSON `body` column.
 * - `null` matches a missing field and a JSON null: `json_extract` yields SQL NULL for both.
 * - booleans compare on `json_type`, because `json_extract` turns `true` into the integer 1 and
 *   would otherwise match a numeric 1 (the driver cannot bind booleans either).
 * - `undefined` values are ignored, like an absent key.
 */
export function whereConditions(where: object | undefined): SqlConditions {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  for (const [field, value] of Object.entries(where ?? {})) {
    if (value === undefined) continue;
    const expr = jsonField(field);
    if (value === null) {
      clauses.push(`${expr} IS NULL`);
    } else if (typeof value === 'boolean') {
      clauses.push(`json_type(body, '$.${field}') = '${value ? 'true' : 'false'}'`);
    } else if (typeof value === 'string' || typeof value === 'number') {
      clauses.push(`${expr} = ?`);
      params.push(value);
    } else {
      throw new TypeError(`embedded store: where.${field} must be a string, number, boolean or null`);
    }
  }
  return { clauses, params };
}

export function whereSql(clauses: readonly string[]): string {
  return clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`;
}

/**
 * LIMIT/OFFSET with validation; SQLite needs a LIMIT (-1 = none) before an OFFSET. The limit is
 * written into the SQL as a literal (it is a checked integer, so nothing can be injected): with a
 * bound `LIMIT ?` SQLite ran a single-row lookup through a unique expression index more than
 * twice as slowly (the api key lookup of every request). The offset stays bound, and is left out
 * when 0, so that paging does not fill the statement cache with one text per page.
 */
export function pageSql(limit: number | undefined, offset: number | undefined, params: SqlValue[]): string {
  if (limit === undefined && offset === undefined) return '';
  const rows = checkCount('limit', limit ?? -1, -1);
  const skip = checkCount('offset', offset ?? 0, 0);
  if (skip === 0) return ` LIMIT ${rows}`;
  params.push(skip);
  return ` LIMIT ${rows} OFFSET ?`;
}

function checkCount(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`embedded store: ${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}
