import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registryCall, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { freePort } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { startApp, type AppProcess } from './fleet.ts';

/** One `apps/registry` process of a shared-store test: its process and its base URL. */
export interface RegistryProcess {
  app: AppProcess;
  url: string;
}

/**
 * `apps/registry` processes over one data dir (one embedded store, one archive directory), for the
 * tests that prove registry state is shared and survives a SIGKILL. Each `start` writes its own
 * config file (its own free loopback port) and waits until the process listens.
 */
export interface RegistryProcesses {
  /** The shared `[storage] data_dir`. */
  data: string;
  start(name: string): Promise<RegistryProcess>;
  /** Kills every process started and removes the temp dir. */
  close(): Promise<void>;
}

export interface RegistryProcessOptions {
  /** `[registry.auth]` of every process; default auth mode disabled (loopback only). */
  auth?: Record<string, unknown>;
  /** More top-level config sections (`network`, ...). */
  config?: Record<string, unknown>;
}

export async function startRegistryProcesses(prefix: string, options: RegistryProcessOptions = {}): Promise<RegistryProcesses> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const data = join(dir, 'data');
  await mkdir(data);
  const processes: AppProcess[] = [];
  return {
    data,
    async start(name) {
      const config = join(dir, `${name}.toml`);
      const registry = { listen: `127.0.0.1:${await freePort()}`, ...(options.auth === undefined ? {} : { auth: options.auth }) };
      await writeFile(config, stringify({ ...options.config, storage: { data_dir: data }, registry }));
      const app = startApp('registry', config);
      processes.push(app);
      return { app, url: await app.ready() };
    },
    async close() {
      for (const app of processes) await app.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One call to a registry process, with an optional bearer. */
export function callRegistry(url: string, method: string, path: string, bearer?: string, body: RegistryCallOptions = {}): Promise<RegistryAnswer> {
  return registryCall(url, method, path, { ...body, ...(bearer === undefined ? {} : { bearer }) });
}
