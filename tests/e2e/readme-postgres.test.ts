import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPostgresStore } from '@agent-platform/store/postgres';
import pg from 'pg';
import { freePort, requireBinary, startPostgresServer, type PostgresServerHandle } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { readmeCommands } from '../support/readme-shell.ts';
import { createWalkthrough } from '../support/readme-walkthrough.ts';

// README "On PostgreSQL", run as written: the store lines appended to the config the first run
// wrote, `createdb`, `npm start`. The README's PostgreSQL (the machine's, 127.0.0.1:5432) is
// played by one this test starts; the config "the first run wrote" listens on a free port.
const EXAMPLE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const initdb = requireBinary('initdb');

describe.skipIf(initdb === null)('README "On PostgreSQL"', () => {
  let dir: string | undefined;
  let server: PostgresServerHandle | undefined;
  let platform: PlatformProcess | undefined;
  afterAll(async () => {
    platform?.kill();
    await server?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('runs the all-in-one on PostgreSQL: tables made on first use, everything there after a restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-readme-pg-'));
    server = await startPostgresServer();
    const data = join(dir, '.agent-platform');
    await mkdir(data);
    const port = await freePort();
    await writeFile(
      join(dir, 'agent-platform.toml'),
      stringify({ server: { listen: `127.0.0.1:${port}` }, storage: { data_dir: './.agent-platform' }, auth: { mode: 'local' }, licence: await writeLicence(data, {}) }),
    );
    let started: PlatformProcess | undefined;
    const w = createWalkthrough(await readmeCommands('On PostgreSQL'), {
      dir,
      home: dir,
      addresses: { '127.0.0.1:5432': `127.0.0.1:${server.port}`, '127.0.0.1:4200': `127.0.0.1:${port}` },
      vars: {},
      async startPlatform(args) {
        started = startPlatform(dir!, args);
        await started.listening(90_000);
        return started.output();
      },
      // The reader's createdb runs as their own role, which the machine's PostgreSQL has; the
      // platform then connects as that same user (the URL names none: docs/postgres.md).
      async createdb(name) {
        const admin = new pg.Client({ connectionString: server!.url });
        await admin.connect();
        try {
          await admin.query(`CREATE ROLE "${userInfo().username}" SUPERUSER LOGIN`);
        } finally {
          await admin.end();
        }
        await server!.createDatabase(name);
      },
    });
    await w.next("cat >> agent-platform.toml <<'TOML'");
    await w.next('createdb agent_platform');
    await w.next('npm start');
    expect(w.remaining()).toEqual([]);
    platform = started!;
    const base = `http://127.0.0.1:${port}`;

    const token = (await call(base, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret as string;
    const install = await call(base, 'POST', '/catalog/install', { token, body: { path: EXAMPLE, activate: true } });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    const agent: string = install.body.installed[2].id;
    expect((await call(base, 'POST', `/agents/${agent}/send`, { token, body: { message: 'Hail on the roof' } })).body.content).toContain('Hail on the roof');

    // The documents are in PostgreSQL, not in the data dir: the tables the store made hold them.
    const store = await openPostgresStore({ url: server.urlOf('agent_platform') });
    try {
      expect((await store.collection('agents').get(agent))?.doc).toMatchObject({ id: agent });
    } finally {
      await store.close();
    }
    platform.child.kill('SIGINT');
    expect(await platform.exited).toBe(0);
    platform = startPlatform(dir);
    await platform.listening(90_000);
    expect((await call(base, 'GET', `/agents/${agent}`, { token })).body).toMatchObject({ id: agent, tasks_completed: 1 });
    expect((await call(base, 'GET', '/security/verify', { token })).body.valid).toBe(true);
  });
});
