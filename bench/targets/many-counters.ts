import { createRequire } from 'node:module';
import { join } from 'node:path';
import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchTarget } from '../target.ts';

/** Counter rows written before the run: what a year of per-agent, per-minute windows could leave. */
const ROWS = 1_000_000;

interface RawDb {
  prepare(sql: string): { run(...params: unknown[]): unknown };
  transaction(fn: () => void): () => void;
  close(): void;
}

/**
 * Fills the platform's store with `ROWS` counters of other agents' rate-limit windows, written
 * straight into the SQLite file (as a long-running platform before issue "Hardening" 10 left
 * them). The routes measured read counters by prefix (agent stats, licence spend): with range
 * reads over the key index, their cost does not depend on how many other counters there are.
 */
function fillCounters(dataDir: string): void {
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;
  const db = new Database(join(dataDir, 'platform.db'));
  try {
    const insert = db.prepare('INSERT INTO counters (key, value) VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < ROWS; i++) insert.run(`ratelimit:agent:${(i % 5000).toString(16).padStart(8, '0')}:${29_000_000 + Math.floor(i / 5000)}`, 1);
    })();
  } finally {
    db.close();
  }
}

function manyCountersTarget(name: string, description: string, path: (agentId: string) => string): BenchTarget {
  return {
    name,
    description,
    async start({ nodeFlags }) {
      const platform = await startPlatformFixture({ nodeFlags, installAgent: true });
      fillCounters(platform.dataDir);
      return {
        urls: [platform.url],
        processes: [{ role: 'platform', pid: platform.pid }],
        request: { method: 'GET', path: path(platform.agentId!), headers: { authorization: `Bearer ${platform.token}` } },
        stop: platform.stop,
      };
    },
  };
}

export const agentStatusManyCounters = manyCountersTarget(
  'all-in-one-agent-status-1m-counters',
  'all-in-one GET /agents/{id} with 1 000 000 other counters in the store (prefix reads)',
  (agentId) => `/agents/${agentId}`,
);

export const licenceStatusManyCounters = manyCountersTarget(
  'all-in-one-licence-status-1m-counters',
  'all-in-one GET /licence/status with 1 000 000 other counters in the store (prefix reads)',
  () => '/licence/status',
);
