import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { openPostgresStore } from '@agent-platform/store/postgres';
import {
  startNatsServer,
  startPostgresServer,
  startRedisServer,
  type NatsServerHandle,
  type PostgresServerHandle,
  type RedisServerHandle,
} from '@agent-platform/testkit';
import { startNodeProcess, type NodeProcess } from './node-process.ts';
import {
  BENCH_RATE_LIMIT_PER_MINUTE,
  bootstrapAdminKey,
  installClaimsIntake,
  sendRequest,
  writeBenchLicence,
} from './platform-setup.ts';
import type { BenchProcess, LoadResult, LoadSettings, StartedTarget } from './target.ts';

const app = (name: string) => fileURLToPath(new URL(`../apps/${name}/src/main.ts`, import.meta.url));
const MODEL_STAND_IN = fileURLToPath(new URL('./servers/model-stand-in.ts', import.meta.url));
const STAND_IN_PROVIDER = 'stand-in';

export type FleetModel = { kind: 'local' } | { kind: 'stand-in'; delayMs: number };

export interface FleetFixtureOptions {
  nodeFlags: string[];
  apis: number;
  workers: number;
  /** `local`: the echo model inside the worker. `stand-in`: an OpenAI-compatible server that waits. */
  model: FleetModel;
  /** `[agents] worker_concurrency`; default: the platform's. */
  workerConcurrency?: number;
  /** Scheduler processes (`apps/scheduler`), on the first api node's config; default none. */
  schedulers?: number;
  /** TOML appended to every node's config file (`[network]` for an integration on loopback). */
  extraConfig?: string;
  /**
   * The store every process shares: `embedded` (one SQLite file through one data_dir, the
   * default) or `postgres` (a PostgreSQL server started for the run on loopback, fsync off as
   * in the tests: docs/performance.md says what that leaves out).
   */
  store?: 'embedded' | 'postgres';
}

export interface FleetFixture {
  urls: string[];
  /** The platform's processes and the servers it needs (nats-server, redis-server); not the stand-in. */
  processes: BenchProcess[];
  token: string;
  agentId: string;
  natsUrl: string;
  /** `[storage] data_dir`: the embedded store every process shares (`platform.db` there). */
  dataDir: string;
  /** Opens the store the fleet shares, from the bench process. */
  openStore(): Promise<Store>;
  stop(): Promise<void>;
}

/**
 * A fleet on this host as README "Running a fleet" starts one: nats-server and redis-server on
 * free loopback ports, `apis` api processes (one config file each, differing only in `[server]
 * listen`) and `workers` agent-worker processes, each started from its own main like `npm start
 * -w apps/<name>`, sharing the embedded store through one data_dir. Logging is left at its
 * default (info), as in the all-in-one targets. Then the first admin key and claims-intake,
 * through the first api node.
 */
export async function startFleetFixture(options: FleetFixtureOptions): Promise<FleetFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-fleet-'));
  const started: NodeProcess[] = [];
  let nats: NatsServerHandle | undefined;
  let redis: RedisServerHandle | undefined;
  let postgres: PostgresServerHandle | undefined;
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
    await Promise.all([nats?.dispose(), redis?.dispose(), postgres?.dispose()]);
    await rm(dir, { recursive: true, force: true });
  };
  const launch = (entry: string, args: string[], logName: string): NodeProcess => {
    const proc = startNodeProcess({ entry, args, cwd: dir, nodeFlags: options.nodeFlags, logFile: join(dir, `${logName}.log`) });
    started.push(proc);
    return proc;
  };
  try {
    [nats, redis] = await Promise.all([startNatsServer(), startRedisServer()]);
    postgres = options.store === 'postgres' ? await startPostgresServer() : undefined;
    const postgresUrl = postgres === undefined ? null : await postgres.createDatabase('agent_platform');
    const modelUrl =
      options.model.kind === 'stand-in'
        ? await launch(MODEL_STAND_IN, ['--delay-ms', String(options.model.delayMs)], 'model-stand-in').listening()
        : null;
    const licence = await writeBenchLicence(join(dir, 'data'), modelUrl === null ? [] : [STAND_IN_PROVIDER]);
    const configs: string[] = [];
    for (let i = 1; i <= options.apis; i++) {
      const path = join(dir, `api-${i}.toml`);
      await writeFile(path, fleetConfig({ nats, redis, postgresUrl, licence, modelUrl, workerConcurrency: options.workerConcurrency, extraConfig: options.extraConfig ?? '' }));
      configs.push(path);
    }
    const apis = configs.map((path, i) => launch(app('api'), ['--config', path], `api-${i + 1}`));
    const workers = Array.from({ length: options.workers }, (_, i) =>
      launch(app('agent-worker'), ['--config', configs[0]!], `agent-worker-${i + 1}`),
    );
    const schedulers = Array.from({ length: options.schedulers ?? 0 }, (_, i) =>
      launch(app('scheduler'), ['--config', configs[0]!], `scheduler-${i + 1}`),
    );
    const urls = await Promise.all(apis.map((p) => p.listening(90_000)));
    await Promise.all(workers.map((p) => p.waitFor(/agent platform \(agent-worker\) \S+ started/, 90_000)));
    await Promise.all(schedulers.map((p) => p.waitFor(/agent platform \(scheduler\) \S+ started/, 90_000)));
    const token = await bootstrapAdminKey(urls[0]!);
    const agentId = await installClaimsIntake(urls[0]!, token);
    const processes: BenchProcess[] = [
      ...apis.map((p, i) => ({ role: `api-${i + 1}`, pid: p.pid })),
      ...workers.map((p, i) => ({ role: `agent-worker-${i + 1}`, pid: p.pid })),
      ...schedulers.map((p, i) => ({ role: `scheduler-${i + 1}`, pid: p.pid })),
      { role: 'nats-server', pid: nats.pid()! },
      { role: 'redis-server', pid: redis.pid()! },
      ...(postgres === undefined ? [] : [{ role: 'postgres', pid: postgres.pid()!, withChildren: true }]),
    ];
    const dataDir = join(dir, 'data');
    const openStore = (): Promise<Store> =>
      postgresUrl === null ? openEmbeddedStore({ path: join(dataDir, 'platform.db') }) : openPostgresStore({ url: postgresUrl });
    return { urls, processes, token, agentId, natsUrl: nats.url, dataDir, openStore, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * One node's config file. `listen` on port 0: each api node takes a free port and prints it.
 * The queue (BullMQ) is not on the send path, but the processes need it to start.
 */
function fleetConfig(input: {
  nats: NatsServerHandle;
  redis: RedisServerHandle;
  /** The database of `store = "postgres"`; null for the embedded store. */
  postgresUrl: string | null;
  licence: { file: string; public_key_file: string };
  modelUrl: string | null;
  workerConcurrency: number | undefined;
  extraConfig: string;
}): string {
  const lines = [
    '[server]',
    'listen = "127.0.0.1:0"',
    '',
    '[storage]',
    'data_dir = "./data"',
    '',
    '[runtime]',
    'bus = "nats"',
    'queue = "bullmq"',
    ...(input.postgresUrl === null ? ['store = "embedded"'] : ['store = "postgres"', `postgres_url = "${input.postgresUrl}"`]),
    `nats_url = "${input.nats.url}"`,
    `redis_url = "${input.redis.url}"`,
    '',
    '[auth]',
    'mode = "local"',
    '',
    '[licence]',
    `file = "${input.licence.file}"`,
    `public_key_file = "${input.licence.public_key_file}"`,
    '',
    '[agents]',
    `rate_limit_per_minute = ${BENCH_RATE_LIMIT_PER_MINUTE}`,
    ...(input.workerConcurrency === undefined ? [] : [`worker_concurrency = ${input.workerConcurrency}`]),
  ];
  if (input.modelUrl !== null) {
    lines.push(
      '',
      '[[providers]]',
      `id = "${STAND_IN_PROVIDER}"`,
      'kind = "openai"',
      `base_url = "${input.modelUrl}"`,
      'models = ["waits"]',
      '',
      '[models]',
      `default = "${STAND_IN_PROVIDER}/waits"`,
    );
  }
  return `${lines.join('\n')}\n${input.extraConfig}`;
}

/**
 * A fleet as a bench target: the send request against its api nodes, measured by autocannon
 * unless `measure` (given the fleet) times something else or changes the load.
 */
export async function startFleetTarget(
  options: FleetFixtureOptions,
  measure?: (fleet: FleetFixture, request: StartedTarget['request'], settings: LoadSettings) => Promise<LoadResult>,
): Promise<StartedTarget> {
  const fleet = await startFleetFixture(options);
  const request = sendRequest(fleet.agentId, fleet.token);
  return {
    urls: fleet.urls,
    processes: fleet.processes,
    request,
    ...(measure === undefined ? {} : { measure: (settings: LoadSettings) => measure(fleet, request, settings) }),
    stop: fleet.stop,
  };
}
