/**
 * Test support shared by the PostgreSQL suites (not part of the adapter): the skip-or-fail rule
 * for a missing server binary, fresh schemas on one test server, and an admin connection.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { requireBinary } from '@agent-platform/testkit';

/**
 * Null when `initdb` and `postgres` are installed; else the reason to skip, printed loudly.
 * Under `CI=true` a missing binary throws instead (`requireBinary`): the suite fails.
 */
export function postgresSkipReason(): string | null {
  const missing = ['initdb', 'postgres'].filter((name) => requireBinary(name) === null);
  if (missing.length === 0) return null;
  const reason = `PostgreSQL store suites not run: ${missing.join(' and ')} not installed (apt-get install postgresql)`;
  const rule = '!'.repeat(100);
  console.warn(`\n${rule}\n!! ${reason}\n${rule}\n`);
  return reason;
}

export function freshSchemaName(): string {
  return `t_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Runs `fn` with a plain connection to `url`, closed afterwards. */
export async function withAdmin<R>(url: string, fn: (client: pg.Client) => Promise<R>): Promise<R> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await withAdmin(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}
