import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { descendantsOf, processRunning, startPostgresServer } from '@agent-platform/testkit';
import type { PostgresServerHandle } from '@agent-platform/testkit';
import { postgresSkipReason, withAdmin } from './pg-test-server.ts';

/**
 * The test server's kill (a crash, what the PostgreSQL fault suites do under load) returns only
 * when every backend of the killed server is gone, not just the postmaster: a start right after
 * it found backends still attached to the old shared memory and refused to run ("pre-existing
 * shared memory block is still in use").
 */
const skipReason = postgresSkipReason();

describe.skipIf(skipReason !== null)(`the test PostgreSQL server${skipReason === null ? '' : ` [SKIPPED: ${skipReason}]`}`, () => {
  let server: PostgresServerHandle | undefined;
  afterAll(async () => server?.dispose());

  it('kill() leaves no backend of the old server alive, and a restart right after it serves again', { timeout: 120_000 }, async () => {
    server = await startPostgresServer();
    for (let round = 0; round < 3; round++) {
      // Twenty busy backends, each in a statement when the server dies.
      const clients = Array.from({ length: 20 }, () => new pg.Client({ connectionString: server!.url }));
      for (const client of clients) client.on('error', () => undefined);
      await Promise.all(clients.map((client) => client.connect()));
      const sleeping = clients.map((client) => client.query('SELECT pg_sleep(60)').catch(() => 'ended'));
      const postmaster = server.pid()!;
      const backends = descendantsOf(postmaster);
      expect(backends.length).toBeGreaterThan(20);

      await server.kill();
      expect([postmaster, ...backends].filter(processRunning)).toEqual([]);
      expect(await Promise.all(sleeping)).toEqual(clients.map(() => 'ended'));
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));

      await server.restart();
      expect(await withAdmin(server.url, async (client) => (await client.query('SELECT 1 AS one')).rows)).toEqual([{ one: 1 }]);
    }
  });
});
