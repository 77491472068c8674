import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import { systemClock } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import {
  freePort,
  requireBinary,
  startNatsServer,
  startPostgresServer,
  startRedisServer,
  type NatsServerHandle,
  type PostgresServerHandle,
  type RedisServerHandle,
} from '@agent-platform/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openEngines, splitPostgresUrls, type Engines } from './open-engines.ts';

const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });
let dir: string;
let opened: Engines[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-engines-'));
});
afterEach(async () => {
  for (const engines of opened) await engines.close();
  opened = [];
  await rm(dir, { recursive: true, force: true });
});

function config(runtime: Record<string, unknown>, storage: Record<string, unknown> = {}): PlatformConfig {
  return validateConfig({ runtime, storage: { data_dir: join(dir, 'data'), ...storage } }, { baseDir: dir, source: 'test' });
}

async function open(runtime: Record<string, unknown>, env: Record<string, string | undefined> = {}): Promise<Engines> {
  const engines = await openEngines(config(runtime), { clock: systemClock, logger, dataDir: join(dir, 'data'), env });
  opened.push(engines);
  return engines;
}

describe('openEngines, embedded', () => {
  it('opens <data_dir>/platform.db and <data_dir>/queue.db, creating the directory', async () => {
    const engines = await open({});
    expect((await engines.store.health()).kind).toBe('embedded');
    expect((await engines.queue.health()).kind).toBe('embedded');
    expect((await engines.bus.health()).kind).toBe('embedded');
    expect(existsSync(join(dir, 'data', 'platform.db'))).toBe(true);
    expect(existsSync(join(dir, 'data', 'queue.db'))).toBe(true);
  });

  it('returns the adapters themselves while tracing is off (the default): no tracing wrapper, no cost', async () => {
    const engines = await open({});
    expect(engines.bus.constructor.name).toBe('EmbeddedBus');
    expect(engines.queue.constructor.name).toBe('EmbeddedQueue');
  });

  it('opens the embedded store with [storage] durability: full by default, normal when asked', async () => {
    expect(((await open({})).store as { durability?: string }).durability).toBe('full');
    const relaxed = await openEngines(config({}, { durability: 'normal' }), { clock: systemClock, logger, dataDir: join(dir, 'data') });
    opened.push(relaxed);
    expect((relaxed.store as { durability?: string }).durability).toBe('normal');
  });

  it('lets two processes of one host share the store and the queue files', async () => {
    const a = await open({});
    const b = await open({});
    await a.store.counters.add('shared', 2);
    await b.store.counters.add('shared', 3);
    expect(await a.store.counters.get('shared')).toBe(5);
    expect((await b.queue.add('q', { n: 1 }, { jobId: 'one' })).duplicate).toBe(false);
    expect((await a.queue.add('q', { n: 1 }, { jobId: 'one' })).duplicate).toBe(true);
  });

  it('names the engine that could not be opened', async () => {
    const port = await freePort();
    const failing = openEngines(config({ bus: 'nats', nats_url: `nats://127.0.0.1:${port}` }), { clock: systemClock, logger, dataDir: join(dir, 'data') });
    await expect(failing).rejects.toThrow(/cannot open the bus \(nats\)/);
  });
});

const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

describe.skipIf(natsBinary === null || redisBinary === null)('openEngines, nats and bullmq', () => {
  let nats: NatsServerHandle;
  let redis: RedisServerHandle;
  beforeAll(async () => {
    [nats, redis] = await Promise.all([startNatsServer(), startRedisServer()]);
  });
  afterAll(async () => {
    await Promise.all([nats?.dispose(), redis?.dispose()]);
  });

  it('connects the bus to runtime.nats_url and the queue to runtime.redis_url', async () => {
    const runtime = { bus: 'nats', queue: 'bullmq', nats_url: nats.url, redis_url: redis.url };
    const a = await open(runtime);
    const b = await open(runtime);
    expect((await a.bus.health()).kind).toBe('nats');
    expect((await a.queue.health()).kind).toBe('bullmq');
    // Two processes' buses meet on the server: what a fleet needs and the embedded bus cannot do.
    await a.bus.serve('fleet.echo', async (payload: { n: number }) => ({ n: payload.n + 1 }));
    expect(await b.bus.request('fleet.echo', { n: 1 }, { timeoutMs: 2_000 })).toEqual({ n: 2 });
    expect((await b.queue.add('fleet', {}, { jobId: 'once' })).duplicate).toBe(false);
    expect((await a.queue.add('fleet', {}, { jobId: 'once' })).duplicate).toBe(true);
  });
});

describe('splitPostgresUrls', () => {
  it('splits at commas that start another postgres URL only', () => {
    expect(splitPostgresUrls('postgres://a:5432/db')).toEqual(['postgres://a:5432/db']);
    expect(splitPostgresUrls('postgres://a/db, postgresql://b/db?options=-c%20x=1,2')).toEqual([
      'postgres://a/db',
      'postgresql://b/db?options=-c%20x=1,2',
    ]);
  });
});

const initdbBinary = requireBinary('initdb');

describe.skipIf(initdbBinary === null)('openEngines, postgres', () => {
  const PASSWORD = 'pg-s3cret-pw';
  let pg: PostgresServerHandle;
  beforeAll(async () => {
    pg = await startPostgresServer({ password: PASSWORD });
    await pg.createDatabase('agent_platform');
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
  });

  it('opens the store on runtime.postgres_url with the password from postgres_password_env, shared by two processes', async () => {
    const runtime = {
      store: 'postgres',
      postgres_url: `postgres://postgres@127.0.0.1:${pg.port}/agent_platform`,
      postgres_password_env: 'AP_PG_PASSWORD',
      postgres_pool_size: 2,
    };
    const a = await open(runtime, { AP_PG_PASSWORD: PASSWORD });
    const b = await open(runtime, { AP_PG_PASSWORD: PASSWORD });
    expect(await a.store.health()).toEqual({ kind: 'postgres', status: 'ok' });
    await a.store.counters.add('shared', 2);
    expect(await b.store.counters.get('shared')).toBe(2);
  });

  it('refuses a wrong password or an unset password variable, naming the store and never the password', async () => {
    const url = `postgres://postgres:wrong-pw-123@127.0.0.1:${pg.port}/agent_platform`;
    const wrong = await open({ store: 'postgres', postgres_url: url }).then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(wrong?.message).toMatch(/^cannot open the store \(postgres\): postgres store: cannot connect to postgres:\/\/postgres:\*\*\*@127/);
    expect(wrong?.message).toMatch(/password authentication failed/);
    expect(wrong?.message).not.toContain('wrong-pw-123');
    await expect(open({ store: 'postgres', postgres_url: url, postgres_password_env: 'AP_PG_UNSET' })).rejects.toThrow(
      'cannot open the store (postgres): [runtime] postgres_password_env names AP_PG_UNSET, which is not set',
    );
  });
});
