import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LicenceClaims } from '@agent-platform/contracts';
import { generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { Store } from '@agent-platform/store';
import {
  freePort,
  startFakeOpenAiServer,
  startNatsServer,
  startRedisServer,
  type FakeOpenAiServer,
  type FakeReply,
  type NatsServerHandle,
  type RedisServerHandle,
  type RecordedRequest,
  PLATFORM_LOADER,
} from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { call } from './platform-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type AppName = 'api' | 'agent-worker' | 'scheduler' | 'channel-bridge' | 'registry';

/** One app process of the fleet, started as an operator starts it. */
export interface AppProcess {
  readonly app: AppName;
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
  /** Resolves once the boot line is printed: the api's or the registry's address, or '' for the other apps. */
  ready(timeoutMs?: number): Promise<string>;
  /** SIGKILL (a crash), then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful drain), then resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `apps/<app>/src/main.ts --config <file>` the way `npm start -w apps/<app>` does; with
 * `netns`, inside that network namespace (`ip netns exec` execs node itself: the child's pid is
 * the app's, tests/support/hosts.ts).
 */
export function startApp(app: AppName, configPath: string, env: Record<string, string> = {}, options: { netns?: string } = {}): AppProcess {
  let output = '';
  const main = join(ROOT, 'apps', app, 'src', 'main.ts');
  const argv = [process.execPath, '--import', PLATFORM_LOADER, main, '--config', configPath];
  const [command, ...args] = options.netns === undefined ? argv : ['ip', 'netns', 'exec', options.netns, ...argv];
  const child = spawn(command!, args, {
    cwd: join(ROOT, 'apps', app),
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const bootLine = bootLineOf(app);
  return {
    app,
    child,
    output: () => output,
    exited,
    async ready(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = bootLine.exec(output);
        if (match !== null) return match[1] ?? '';
        if (child.exitCode !== null) throw new Error(`${app} exited with ${child.exitCode}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`${app} did not start in ${timeoutMs} ms:\n${output}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The line an app prints once it serves: the api's listener, the registry's boot line with its listener, the others' boot line. */
function bootLineOf(app: AppName): RegExp {
  if (app === 'api') return /listening on (\S+)/;
  if (app === 'registry') return /agent platform \(registry\) \S+ started: .*listening on (\S+)/;
  return new RegExp(`agent platform \\(${app}\\) \\S+ started`);
}

export interface FleetOptions {
  apis: number;
  workers: number;
  schedulers: number;
  /** Merged into every config file (`[agents]`, `[auth]`, ...). */
  config?: Record<string, Record<string, unknown>>;
  /** Extra licence claims, e.g. `transaction_budgets`. */
  licence?: Partial<LicenceClaims>;
  /** How the fake model provider (the default model) answers; default: an echo of the last user message. */
  reply?: (request: RecordedRequest) => FakeReply;
  /** Runs on the (still empty) shared data dir before any process starts, e.g. to seed the store. */
  prepare?: (dataDir: string) => Promise<void>;
}

/**
 * A fleet on one host as the README's "Running a fleet" starts it: nats-server and redis-server
 * on free loopback ports, one config file per api node (differing only in `[server] listen`),
 * the embedded store shared through one data_dir, `[auth] mode = "local"`, a licence signed for
 * the test, and a fake OpenAI-compatible server as the default model.
 */
export interface Fleet {
  readonly dir: string;
  readonly nats: NatsServerHandle;
  readonly redis: RedisServerHandle;
  readonly provider: FakeOpenAiServer;
  readonly apis: AppProcess[];
  /** Base URLs of the api nodes, in the order of `apis`. */
  readonly urls: string[];
  readonly workers: AppProcess[];
  readonly schedulers: AppProcess[];
  /** The config file the workers and schedulers use (api node 0's). */
  readonly configPath: string;
  /** Starts one more app process on the fleet's config (with `env`, e.g. `AP_FAULT_STOP_AT`) and waits for its boot line. */
  add(app: AppName, env?: Record<string, string>): Promise<AppProcess>;
  /** Starts one more api node on a config of its own (a fresh port, with `env`), waits for it, and returns it with its URL. */
  addApi(env?: Record<string, string>): Promise<{ process: AppProcess; url: string }>;
  /**
   * Starts one more api node like `addApi` but returns it as soon as it is spawned, before its
   * boot line: a test that watches which node takes over some work must see a booting node too.
   */
  launchApi(env?: Record<string, string>): Promise<AppProcess>;
  /** Opens the shared store from this process (one more process of the host). */
  openStore(): Promise<Store>;
  /** Every process's output, for a failure message. */
  logs(): string;
  close(): Promise<void>;
}

const DAY_SECS = 86_400;

export function echoReply(request: RecordedRequest): FakeReply {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  const last = messages.filter((m) => m.role === 'user').at(-1);
  return { text: last?.content ?? '' };
}

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-fleet-'));
  const [nats, redis, provider] = await Promise.all([
    startNatsServer(),
    startRedisServer({ persistence: 'aof' }),
    startFakeOpenAiServer({ fallback: options.reply ?? echoReply }),
  ]);
  const started: AppProcess[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(started.map((p) => p.kill()));
    await Promise.all([nats.dispose(), redis.dispose(), provider.close()]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await options.prepare?.(join(dir, 'data'));
    const licence = await writeLicence(dir, options.licence ?? {});
    const configPaths: string[] = [];
    /** Writes the next api node's config file (its own free port) and returns its path. */
    const writeApiConfig = async (): Promise<string> => {
      const document = fleetConfig({ dir, nats, redis, provider, licence, listen: `127.0.0.1:${await freePort()}`, extra: options.config ?? {} });
      const path = join(dir, `fleet-${configPaths.length}.toml`);
      await writeFile(path, stringify(document));
      configPaths.push(path);
      return path;
    };
    for (let i = 0; i < Math.max(1, options.apis); i++) await writeApiConfig();
    const configPath = configPaths[0]!;
    const launch = (app: AppName, path = configPath, env: Record<string, string> = {}): AppProcess => {
      const proc = startApp(app, path, env);
      started.push(proc);
      return proc;
    };
    const launchApi = async (env: Record<string, string> = {}): Promise<AppProcess> => launch('api', await writeApiConfig(), env);
    const apis = configPaths.slice(0, options.apis).map((path) => launch('api', path));
    const workers = Array.from({ length: options.workers }, () => launch('agent-worker'));
    const schedulers = Array.from({ length: options.schedulers }, () => launch('scheduler'));
    const urls = await Promise.all(apis.map((p) => p.ready()));
    await Promise.all([...workers, ...schedulers].map((p) => p.ready()));
    return {
      dir,
      nats,
      redis,
      provider,
      apis,
      urls,
      workers,
      schedulers,
      configPath,
      launchApi,
      async addApi(env = {}) {
        const proc = await launchApi(env);
        return { process: proc, url: await proc.ready() };
      },
      async add(app, env = {}) {
        const proc = launch(app, configPath, env);
        await proc.ready();
        return proc;
      },
      openStore: () => openEmbeddedStore({ path: join(dir, 'data', 'platform.db') }),
      logs: () => started.map((p) => `--- ${p.app} (pid ${p.child.pid})\n${p.output()}`).join('\n'),
      close,
    };
  } catch (error) {
    const logs = started.map((p) => `--- ${p.app}\n${p.output()}`).join('\n');
    await close();
    throw new Error(`the fleet did not start: ${(error as Error).message}\n${logs}`, { cause: error });
  }
}

export async function writeLicence(dir: string, extra: Partial<LicenceClaims>): Promise<{ file: string; public_key_file: string }> {
  const keys = await generateLicenceKeyPair();
  const now = Math.floor(Date.now() / 1000);
  const claims: LicenceClaims = {
    carrier_name: 'Fleet Mutual',
    carrier_id: 'fleet-mutual',
    iat: now - DAY_SECS,
    exp: now + 30 * DAY_SECS,
    period_start: new Date((now - DAY_SECS) * 1000).toISOString(),
    period_end: new Date((now + 29 * DAY_SECS) * 1000).toISOString(),
    providers: { local: true, managed_cloud: false },
    provider_entitlements: [{ provider_id: 'fake', budget_usd: null }],
    ...extra,
  };
  const file = join(dir, 'licence.jwt');
  const public_key_file = join(dir, 'licence-public.pem');
  await writeFile(public_key_file, keys.publicKeyPem);
  await writeFile(file, `${await issueLicence(keys.privateKeyPem, claims)}\n`);
  return { file, public_key_file };
}

function fleetConfig(input: {
  dir: string;
  nats: NatsServerHandle;
  redis: RedisServerHandle;
  provider: FakeOpenAiServer;
  licence: { file: string; public_key_file: string };
  listen: string;
  extra: Record<string, Record<string, unknown>>;
}): Record<string, unknown> {
  const { extra } = input;
  return {
    ...extra,
    server: { listen: input.listen, ...extra.server },
    storage: { data_dir: join(input.dir, 'data') },
    // A 5 s job lock: a job whose process is SIGKILLed runs again after 5 s, not BullMQ's 30 s.
    runtime: { bus: 'nats', queue: 'bullmq', store: 'embedded', nats_url: input.nats.url, redis_url: input.redis.url, queue_job_lock_secs: 5, ...extra.runtime },
    auth: { mode: 'local', ...extra.auth },
    licence: input.licence,
    providers: [{ id: 'fake', kind: 'openai', base_url: input.provider.url, models: ['m'] }],
    models: { default: 'fake/m' },
    logging: { level: 'warn', ...extra.logging },
  };
}

/**
 * Which of `pids` has a TCP socket whose local port is `port` (Linux: /proc/net/tcp{,6} map the
 * port to a socket inode, /proc/<pid>/fd links name the inodes a process holds). For tests that
 * must act on the process doing something, e.g. SIGKILL the worker running a given call.
 */
export async function pidOwningPort(pids: number[], port: number): Promise<number | null> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (local !== undefined && Number.parseInt(local.split(':')[1] ?? '', 16) === port) inodes.add(fields[9] ?? '');
    }
  }
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined && inodes.has(inode)) return pid;
    }
  }
  return null;
}

/** A fleet's first admin key (the bootstrap rule) and the example `claims-intake` agent installed and activated on it. */
export async function claimsIntakeOn(api: string): Promise<{ token: string; agent: string }> {
  const token: string = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
  const path = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
  const install = await call(api, 'POST', '/catalog/install', { token, body: { path, activate: true } });
  if (install.status !== 201) throw new Error(`installing claims-intake answered ${install.status}: ${JSON.stringify(install.body)}`);
  return { token, agent: install.body.installed[2].id };
}
