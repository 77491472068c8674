import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@agent-platform/config';
import type { PlatformConfig, Role } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import type { ApiApp, RoutePlugin } from '../api-app.ts';
import { buildApi } from '../build-api.ts';
import { composeApi, type ComposedApi } from '../compose.ts';
import type { ApiDeps } from '../deps.ts';
import type { ProcessService } from '../run-process.ts';
import { createApiService, type ApiService } from '../service.ts';
import { sendRequest, type TestRequestOptions, type TestResponse } from './test-request.ts';
import { toTomlText } from './toml-text.ts';

export type DeepPartial<T> = T extends readonly (infer U)[] ? readonly DeepPartial<U>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

export interface StartTestApiOptions {
  /** Config file content (the TOML shape); merged over the test defaults below. */
  config?: DeepPartial<PlatformConfig>;
  /** Reuse a data dir (durability tests); not deleted by `close()`. Default: a fresh temp dir. */
  dataDir?: string;
  /** Listen on a real port (default true); false builds the app for `inject` only. */
  listen?: boolean;
  clock?: Clock;
  /** Test-only route groups, registered after the real ones with the same hooks. */
  routes?: readonly RoutePlugin[];
  /** Environment seen by composition (vault key variable, provider keys). Default: empty. */
  env?: Record<string, string | undefined>;
  /**
   * Services run beside the api over its deps, as a root composes them (e.g. the all-in-one's
   * agent worker): started before the listener, stopped after it, restarted by `restart()`.
   */
  services?: (deps: ApiDeps) => ProcessService[];
  /** Wraps the store the composition uses (the store-operation guard's `StoreOperationCounter.wrap`). */
  decorateStore?: (store: Store) => Store;
}

export interface TestApi {
  /** `http://127.0.0.1:<port>` (https with [server.tls], `unix:/path` for a socket); '' without listen. */
  readonly url: string;
  readonly app: ApiApp;
  readonly deps: ApiDeps;
  readonly dataDir: string;
  /** The config file the platform was started with (rewrite it, then POST /config/reload). */
  readonly configPath: string;
  /** Log lines captured so far (JSON text), oldest first. */
  logs(): string[];
  /** A real HTTP request when listening, else `app.inject`. JSON bodies are sent and parsed for you. */
  request(method: string, path: string, options?: TestRequestOptions): Promise<TestResponse>;
  /** Creates an API key directly through the key service and returns its secret. */
  issueKey(role: Role, name?: string): Promise<string>;
  /** Closes everything and composes again on the same data dir and config file. */
  restart(): Promise<void>;
  /** Resolves once a POST /shutdown has stopped the listener. */
  waitForShutdown(): Promise<void>;
  /** Stops the api, closes the engines, deletes the temp data dir (not a given one). */
  close(): Promise<void>;
}

/** Defaults that keep tests fast, quiet and isolated: loopback port 0, data under the temp dir. */
function testConfig(dataDir: string, overrides: DeepPartial<PlatformConfig> | undefined): Record<string, unknown> {
  const base = {
    server: { listen: '127.0.0.1:0' },
    storage: { data_dir: join(dataDir, 'data') },
    logging: { level: 'info', buffer_lines: 5000 },
  };
  return merge(base, overrides ?? {});
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    const bothTables = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof prev === 'object' && prev !== null && !Array.isArray(prev);
    out[k] = bothTables ? merge(prev as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

/**
 * Starts the real api (config file, embedded engines, every route and hook) for a test. Each
 * call gets its own temp dir, store and port, so test files run in parallel safely.
 */
export async function startTestApi(options: StartTestApiOptions = {}): Promise<TestApi> {
  const ownsDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'ap-api-test-')));
  await mkdir(dataDir, { recursive: true });
  const configPath = join(dataDir, 'agent-platform.toml');
  await writeFile(configPath, toTomlText(testConfig(dataDir, options.config)));
  const env = options.env ?? {};

  let composed: ComposedApi | null = null;
  let service: ApiService | null = null;
  let app: ApiApp | null = null;
  let url = '';
  let shutdown: Promise<void> | null = null;
  let services: ProcessService[] = [];

  const up = async (): Promise<void> => {
    const loaded = await loadConfig({ argv: ['--config', configPath], env, cwd: dataDir });
    composed = await composeApi(loaded, {
      env,
      cwd: dataDir,
      logDestination: 'silent',
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.decorateStore ? { decorateStore: options.decorateStore } : {}),
      requestShutdown: () => {
        shutdown ??= (service?.stop() ?? Promise.resolve()).then(() => undefined);
      },
    });
    services = options.services?.(composed.deps) ?? [];
    for (const extra of services) await extra.start();
    if (options.listen === false) {
      app = await buildApi(composed.deps, { routes: options.routes ?? [] });
      await app.ready();
      url = '';
      return;
    }
    service = createApiService(composed.deps, { routes: options.routes ?? [] });
    url = (await service.start()).address;
    app = service.app;
  };

  const down = async (): Promise<void> => {
    if (service !== null) await service.stop();
    else if (app !== null) await app.close();
    for (const extra of services.reverse()) await extra.stop();
    services = [];
    await composed?.close();
    service = null;
    app = null;
    composed = null;
  };

  await up();
  const api: TestApi = {
    get url() {
      return url;
    },
    get app() {
      if (app === null) throw new Error('test api is closed');
      return app;
    },
    get deps() {
      if (composed === null) throw new Error('test api is closed');
      return composed.deps;
    },
    dataDir,
    configPath,
    logs: () => composed?.deps.logBuffer.lines() ?? [],
    request: (method, path, requestOptions = {}) => sendRequest({ url, app: api.app }, method, path, requestOptions),
    issueKey: async (role, name = `test-${role}`) => (await api.deps.keys.create({ name, role })).secret,
    restart: async () => {
      await down();
      shutdown = null;
      await up();
    },
    waitForShutdown: async () => {
      const deadline = Date.now() + 10_000;
      while (shutdown === null) {
        if (Date.now() > deadline) throw new Error('no shutdown was requested within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await shutdown;
    },
    close: async () => {
      await down();
      if (ownsDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return api;
}
