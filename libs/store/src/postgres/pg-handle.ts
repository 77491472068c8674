import pg from 'pg';
import type { PoolClient, QueryResultRow } from 'pg';
import { connectionUrl, redactPostgresUrl, secretRedactor } from './pg-url.ts';
import { namingClient, StatementNames } from './pg-statement-names.ts';

/** How long a transaction may sit idle between two statements before the server ends it (see createPool). */
const IDLE_IN_TRANSACTION_MS = 5000;

/** How long `health()` waits for `SELECT 1` before reporting the server down. */
export const HEALTH_TIMEOUT_MS = 5000;
/** The advisory lock every schema change (migrations, a new table or index) takes, cluster-wide. */
export const SCHEMA_LOCK_KEY = 7_165_300_221;

export interface PgHandleOptions {
  /** Tried in order whenever a new connection cannot be made (failover, docs/postgres.md). */
  urls: readonly string[];
  /** Overrides the URLs' passwords (from `[runtime] postgres_password_env`). */
  password?: string;
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  /**
   * The store's statements go by name, parsed and planned once per connection (`[runtime]
   * postgres_prepared_statements`); false sends every one unnamed (a PgBouncer in transaction
   * mode that does not track named statements). Default true.
   */
  preparedStatements?: boolean;
}

/** A query error the adapter raises itself: names the store, never a password. */
export class PostgresStoreError extends Error {
  constructor(
    message: string,
    /** The server's SQLSTATE when it answered with one (`57014` a statement timeout, ...). */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'PostgresStoreError';
  }
}

/**
 * One `pg.Pool` per URL, of which one is in use: a new connection is asked of the current URL,
 * then of each next one in order, and the first that connects becomes the current one (it stays
 * so until it too cannot connect). A query that fails after its connection was made is never
 * re-sent elsewhere: it may have run, so the caller sees the error.
 *
 * Every pool and client carries an `error` listener: a server that goes away while a connection
 * sits idle makes node-postgres emit `error`, which with no listener would crash the process.
 * The URLs and the password are kept only inside `redact`, never in a field someone could log.
 */
export class PgHandle {
  private pools: pg.Pool[];
  private current = 0;
  private readonly names = new StatementNames();
  private closed = false;
  readonly redact: (text: string) => string;
  /** The last error an idle connection reported (for `health()`), redacted. */
  lastIdleError: string | undefined;

  constructor(private readonly options: PgHandleOptions) {
    if (options.urls.length === 0) throw new TypeError('postgres store: at least one url is needed');
    const effective = options.urls.map((url) => connectionUrl(url, options.password));
    this.redact = secretRedactor([...effective, ...options.urls], options.password);
    this.pools = effective.map((url) => this.createPool(url));
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  get statementTimeoutMs(): number {
    return this.options.statementTimeoutMs;
  }

  /** One statement on a pooled connection (its own transaction). */
  async query<R extends QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    const client = await this.acquire();
    let broken: Error | undefined;
    try {
      return (await client.query<R>(text, params)).rows;
    } catch (err) {
      broken = isConnectionError(err) ? (err as Error) : undefined;
      throw this.translate(err);
    } finally {
      // A connection that failed is destroyed rather than handed to the next caller.
      client.release(broken);
    }
  }

  /**
   * `fn` inside BEGIN/COMMIT on one connection; ROLLBACK when it throws. A lost connection
   * rolls back on the server by itself (nothing half-written) and the client is destroyed.
   */
  async transaction<R>(fn: (client: PoolClient) => Promise<R>): Promise<R> {
    const client = await this.acquire();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (isConnectionError(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch((rollbackErr: unknown) => (broken = rollbackErr as Error));
      throw this.translate(err);
    } finally {
      client.release(broken);
    }
  }

  /** Runs schema changes under the cluster-wide advisory lock (taken for the transaction only). */
  async underSchemaLock<R>(fn: (client: PoolClient) => Promise<R>): Promise<R> {
    return this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY]);
      return fn(client);
    });
  }

  /** `SELECT 1`, abandoned after `timeoutMs`. */
  async ping(timeoutMs = HEALTH_TIMEOUT_MS): Promise<void> {
    const ping = this.query('SELECT 1');
    void ping.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to SELECT 1 within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Idempotent; afterwards every operation rejects with "postgres store is closed". */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pools = this.pools;
    this.pools = [];
    await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
  }

  /** Maps driver errors to what callers see: clear timeouts, connection losses without secrets. */
  translate(err: unknown): unknown {
    if (!(err instanceof Error)) return err;
    const code = (err as { code?: unknown }).code;
    if (code === '57014') {
      return new PostgresStoreError(
        `postgres store: statement cancelled after statement_timeout (${this.options.statementTimeoutMs} ms): ${this.redact(err.message)}`,
        '57014',
      );
    }
    if (isConnectionError(err)) {
      return new PostgresStoreError(
        `postgres store: connection lost: ${this.redact(err.message)}`,
        typeof code === 'string' ? code : undefined,
      );
    }
    // Server errors (constraint violations, ...) are kept as they are: callers read their code.
    return err;
  }

  /** A connection from the current URL's pool, else from the next URL that connects. */
  private async acquire(): Promise<PoolClient> {
    if (this.closed) throw new PostgresStoreError('postgres store is closed');
    const failures: string[] = [];
    const count = this.pools.length;
    for (let i = 0; i < count; i++) {
      const index = (this.current + i) % count;
      const pool = this.pools[index]!;
      try {
        const client = await pool.connect();
        this.current = index;
        return client;
      } catch (err) {
        if (this.closed) throw new PostgresStoreError('postgres store is closed');
        // Waiting for a free pooled connection timed out: this server is busy, not gone, so
        // this is no reason to move to the next URL.
        if (err instanceof Error && err.message === 'timeout exceeded when trying to connect') {
          throw new PostgresStoreError(
            `postgres store: no free connection within ${this.options.connectTimeoutMs} ms (all ${this.options.poolSize} of the pool busy)`,
          );
        }
        const url = this.options.urls[index]!;
        failures.push(`${redactPostgresUrl(url)}: ${this.redact(err instanceof Error ? err.message : String(err))}`);
      }
    }
    // No `cause`: the driver's error may quote the connection parameters.
    throw new PostgresStoreError(`postgres store: cannot connect to ${failures.join('; ')}`);
  }

  private createPool(url: string): pg.Pool {
    const { statementTimeoutMs, connectTimeoutMs, poolSize } = this.options;
    const pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      statement_timeout: statementTimeoutMs,
      // A process cut off from the server in the middle of a transaction (a host partitioned, a
      // process frozen) would hold that transaction's row locks until TCP notices, hours later, and
      // every other process touching those rows would wait on them. The store's transactions never
      // sit idle between two statements for longer than a network round trip: the server ends one
      // that does after IDLE_IN_TRANSACTION_MS, and its locks with it.
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      // A server that vanishes without closing the socket must not hang a query forever.
      query_timeout: statementTimeoutMs + 5000,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      application_name: 'agent-platform',
      ...(this.options.preparedStatements === false ? {} : { Client: namingClient(this.names) }),
    });
    pool.on('error', (err) => {
      this.lastIdleError = this.redact(err.message);
    });
    pool.on('connect', (client) => {
      client.on('error', (err) => {
        this.lastIdleError = this.redact(err.message);
      });
    });
    return pool;
  }
}

/** True for a unique violation (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505';
}

/**
 * True when the connection itself failed (socket errors, the server shutting down or
 * terminating the backend, a client-side read timeout), rather than the statement.
 */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Class 08 (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now).
    if (code.startsWith('08') || /^57P0[1-3]$/.test(code)) return true;
    if (/^E[A-Z]+$/.test(code)) return true; // ECONNRESET, ECONNREFUSED, EPIPE, ...
  }
  return /Connection terminated|connection ended|Query read timeout|Client has encountered a connection error/i.test(
    err.message,
  );
}
