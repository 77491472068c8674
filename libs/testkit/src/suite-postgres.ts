import { afterAll, beforeAll } from 'vitest';
import { startPostgresServer, type PostgresServerHandle } from './postgres-server.ts';

/**
 * A PostgreSQL server of the suite's own, started before its tests and disposed after them, with
 * one database; `url()` is that database's URL once started. Call it inside the suite's describe.
 */
export function suitePostgres(): { url: () => string } {
  let server: PostgresServerHandle | undefined;
  let url: string | undefined;
  beforeAll(async () => {
    server = await startPostgresServer();
    url = await server.createDatabase('agent_platform');
  }, 60_000);
  afterAll(async () => {
    await server?.dispose();
  });
  return {
    url: () => {
      if (url === undefined) throw new Error('the suite PostgreSQL is not started yet');
      return url;
    },
  };
}
