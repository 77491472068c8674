import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LicenceClaims } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openPostgresStore } from '@agent-platform/store/postgres';
import {
  startFakeOpenAiServer,
  startNatsServer,
  startPostgresServer,
  startRedisServer,
  type FakeOpenAiServer,
  type FakeReply,
  type NatsServerHandle,
  type PostgresServerHandle,
  type RecordedRequest,
  type RedisServerHandle,
} from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { echoReply, startApp, writeLicence, type AppName, type AppProcess } from './fleet.ts';
import { createHostNetwork, type Host, type HostNetwork } from './hosts.ts';

/** The api's port on every api host (each host has its own network namespace, so they never clash). */
const API_PORT = 4200;

export interface MultiHostFleetOptions {
  apis: number;
  workers: number;
  schedulers: number;
  bridges: number;
  /** Merged into every host's config file (`[agents]`, `[workflows]`, ...). */
  config?: Record<string, Record<string, unknown>>;
  licence?: Partial<LicenceClaims>;
  reply?: (request: RecordedRequest) => FakeReply;
}

/** One platform process and the host it runs on. */
export interface HostedApp {
  readonly app: AppName;
  readonly host: Host;
  /** The running process (replaced by `restart`). */
  process: AppProcess;
  /** The api's base URL (`http://<host address>:4200`); '' for the other apps. */
  readonly url: string;
}

/**
 * A fleet on several hosts (tests/support/hosts.ts): each api node, worker, scheduler and bridge
 * in a network namespace of its own with its own data dir, talking only over the bridge to
 * NATS, Redis, PostgreSQL and the fake model provider, which run in the test's namespace on the
 * bridge's address. What the deployment hands every node, as an operator would (docs/scale-out.md):
 * the vault key (in `AP_VAULT_KEY`), the licence and its public key, the audit checkpoint and
 * backup signing keys, each copied onto every host's own disk. Nothing else is shared.
 */
export interface MultiHostFleet {
  readonly network: HostNetwork;
  readonly nats: NatsServerHandle;
  readonly redis: RedisServerHandle;
  readonly postgres: PostgresServerHandle;
  readonly postgresUrl: string;
  readonly provider: FakeOpenAiServer;
  readonly apis: HostedApp[];
  readonly workers: HostedApp[];
  readonly schedulers: HostedApp[];
  readonly bridges: HostedApp[];
  /** The api nodes' base URLs. */
  readonly urls: string[];
  /** Starts the app of `hosted` again on its host (after a kill), and waits for its boot line. */
  restart(hosted: HostedApp): Promise<void>;
  /** Starts one more app on a new host of its own; it joins `apis`, `workers`, ... (not `urls`). */
  addHost(app: AppName, env?: Record<string, string>): Promise<HostedApp>;
  /** Opens the fleet's store from the test process. */
  openStore(): Promise<Store>;
  logs(): string;
  close(): Promise<void>;
}

interface Deployment {
  vaultKey: string;
  files: Record<'licence' | 'licence_public' | 'checkpoint_key' | 'backup_key', string>;
}

export async function startMultiHostFleet(options: MultiHostFleetOptions): Promise<MultiHostFleet> {
  const roles: Array<{ app: AppName; name: string }> = [
    ...Array.from({ length: options.apis }, (_, i) => ({ app: 'api' as const, name: `api-${i + 1}` })),
    ...Array.from({ length: options.workers }, (_, i) => ({ app: 'agent-worker' as const, name: `worker-${i + 1}` })),
    ...Array.from({ length: options.schedulers }, (_, i) => ({ app: 'scheduler' as const, name: `scheduler-${i + 1}` })),
    ...Array.from({ length: options.bridges }, (_, i) => ({ app: 'channel-bridge' as const, name: `bridge-${i + 1}` })),
  ];
  const network = await createHostNetwork(roles.map((r) => r.name));
  const dir = await mkdtemp(join(tmpdir(), 'ap-multihost-'));
  const servers: Array<{ dispose(): Promise<void> } | { close(): Promise<void> }> = [];
  const hosted: HostedApp[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(hosted.map((h) => h.process.kill()));
    await network.close();
    for (const server of servers.reverse()) await ('dispose' in server ? server.dispose() : server.close()).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const gateway = network.gateway;
    // A host cut off leaves NATS's queue groups within seconds, as docs/scale-out.md asks of a fleet's nats-server.
    const nats = await startNatsServer({ host: gateway, pingIntervalSecs: 2 });
    servers.push(nats);
    const redis = await startRedisServer({ host: gateway, persistence: 'aof' });
    servers.push(redis);
    const postgres = await startPostgresServer({ host: gateway });
    servers.push(postgres);
    const postgresUrl = await postgres.createDatabase('agent_platform');
    const provider = await startFakeOpenAiServer({ host: gateway, fallback: options.reply ?? echoReply });
    servers.push(provider);
    const deployment = await writeDeployment(dir, options.licence ?? {});

    const env = { AP_VAULT_KEY: deployment.vaultKey };
    const configOf = async (app: AppName, host: Host): Promise<string> => {
      const secrets = join(host.dataDir, 'secrets');
      await mkdir(secrets, { recursive: true, mode: 0o700 });
      const local: Record<string, string> = {};
      for (const [name, file] of Object.entries(deployment.files)) {
        local[name] = join(secrets, name);
        await copyFile(file, local[name]);
      }
      const extra = options.config ?? {};
      const document = {
        ...extra,
        server: { listen: `${app === 'api' ? host.address : '127.0.0.1'}:${API_PORT}`, ...extra.server },
        storage: { data_dir: join(host.dataDir, 'data'), ...extra.storage },
        runtime: {
          bus: 'nats',
          queue: 'bullmq',
          store: 'postgres',
          nats_url: nats.url,
          redis_url: redis.url,
          postgres_url: postgresUrl,
          queue_job_lock_secs: 5,
          ...extra.runtime,
        },
        auth: { mode: 'local', ...extra.auth },
        licence: { file: local.licence, public_key_file: local.licence_public },
        audit: { checkpoints: { signing_key_file: local.checkpoint_key }, ...extra.audit },
        backup: { signing_key_file: local.backup_key, ...extra.backup },
        network: { allow_private_targets: true, ...extra.network },
        providers: [{ id: 'fake', kind: 'openai', base_url: provider.url, models: ['m'] }],
        models: { default: 'fake/m' },
        logging: { level: 'warn', ...extra.logging },
      };
      const path = join(host.dataDir, 'platform.toml');
      await writeFile(path, stringify(document));
      return path;
    };
    const launch = async (app: AppName, host: Host, extraEnv: Record<string, string> = {}): Promise<HostedApp> => {
      const configPath = await configOf(app, host);
      const entry: HostedApp = {
        app,
        host,
        process: startApp(app, configPath, { ...env, ...extraEnv }, { netns: host.netns }),
        url: app === 'api' ? `http://${host.address}:${API_PORT}` : '',
      };
      hosted.push(entry);
      return entry;
    };
    const all = await Promise.all(roles.map((role, i) => launch(role.app, network.hosts[i]!)));
    await Promise.all(all.map((h) => h.process.ready()));
    const byApp = (app: AppName) => all.filter((h) => h.app === app);
    const apis = byApp('api');
    const lists: Partial<Record<AppName, HostedApp[]>> = {
      api: apis,
      'agent-worker': byApp('agent-worker'),
      scheduler: byApp('scheduler'),
      'channel-bridge': byApp('channel-bridge'),
    };
    return {
      network,
      nats,
      redis,
      postgres,
      postgresUrl,
      provider,
      apis,
      workers: lists['agent-worker']!,
      schedulers: lists.scheduler!,
      bridges: lists['channel-bridge']!,
      urls: apis.map((a) => a.url),
      async restart(entry) {
        await entry.process.kill();
        entry.process = startApp(entry.app, join(entry.host.dataDir, 'platform.toml'), env, { netns: entry.host.netns });
        await entry.process.ready();
      },
      async addHost(app, extraEnv = {}) {
        const host = await network.add(`${app}-${hosted.length + 1}`);
        const entry = await launch(app, host, extraEnv);
        await entry.process.ready();
        lists[app]?.push(entry);
        return entry;
      },
      openStore: () => openPostgresStore({ url: postgresUrl }),
      logs: () => hosted.map((h) => `--- ${h.app} on ${h.host.name} (pid ${h.process.child.pid})\n${h.process.output()}`).join('\n'),
      close,
    };
  } catch (error) {
    const logs = hosted.map((h) => `--- ${h.app} on ${h.host.name}\n${h.process.output()}`).join('\n');
    await close();
    throw new Error(`the multi-host fleet did not start: ${(error as Error).message}\n${logs}`, { cause: error });
  }
}

/** What an operator hands every node: the licence, its public key, the signing keys, the vault key. */
async function writeDeployment(dir: string, licence: Partial<LicenceClaims>): Promise<Deployment> {
  const { file, public_key_file } = await writeLicence(dir, licence);
  const pem = (): string => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const checkpoint = join(dir, 'audit-checkpoint-key.pem');
  const backup = join(dir, 'backup-signing-key.pem');
  await writeFile(checkpoint, pem(), { mode: 0o600 });
  await writeFile(backup, pem(), { mode: 0o600 });
  return {
    vaultKey: randomBytes(32).toString('base64'),
    files: { licence: file, licence_public: public_key_file, checkpoint_key: checkpoint, backup_key: backup },
  };
}
