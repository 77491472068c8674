import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** One statement of a job; `read` statements return their rows, the others nothing. */
export interface SqliteJobStep {
  sql: string;
  params?: ReadonlyArray<string | number | bigint | null>;
  read?: boolean;
}

/**
 * The worker's code, plain CommonJS so that it runs under any loader (tsx, vitest, plain node).
 * It opens its own connection to `file`, runs the steps in order and closes it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.file, { timeout: workerData.timeoutMs });
  const results = [];
  for (const step of workerData.steps) {
    const statement = db.prepare(step.sql);
    if (step.read) results.push(statement.all(...(step.params || [])));
    else { statement.run(...(step.params || [])); results.push(null); }
  }
  parentPort.postMessage({ ok: true, results });
} catch (error) {
  parentPort.postMessage({ ok: false, message: String((error && error.message) || error), code: error && error.code });
} finally {
  if (db) db.close();
}
`;

const driver = createRequire(import.meta.url).resolve('better-sqlite3');

/** What a failed job threw in the worker: the driver's message and SQLite code. */
export class SqliteJobError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteJobError';
  }
}

/**
 * Runs statements on their own connection to `file` in a worker thread. Copies of a whole
 * database (`VACUUM INTO`) take as long as the database is large; here they never block the
 * event loop that serves requests. Resolves with the rows of each `read` step (null for others).
 */
export function runSqliteJob(
  file: string,
  steps: readonly SqliteJobStep[],
  timeoutMs = 5000,
): Promise<Array<unknown[] | null>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, steps, timeoutMs } });
    let settled = false;
    worker.once(
      'message',
      (message: { ok: boolean; results?: Array<unknown[] | null>; message?: string; code?: string }) => {
        settled = true;
        if (message.ok) resolve(message.results ?? []);
        else reject(new SqliteJobError(message.message ?? 'sqlite job failed', message.code));
      },
    );
    worker.once('error', (error) => {
      if (!settled) reject(error);
      settled = true;
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`sqlite job worker exited with code ${code} before answering`));
    });
  });
}
