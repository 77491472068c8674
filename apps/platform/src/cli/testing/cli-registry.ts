import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryService } from '@agent-platform/registry';
import { registryCall } from '@agent-platform/registry-core/testing';
import { startPlatformTestApi, type PlatformTestApi, type StartPlatformTestApiOptions } from '../../testing/platform-test-api.ts';
import { runCliHere, type CliResult } from './cli-runs.ts';

/** A real registry for CLI tests: the all-in-one's, in auth mode local, with a registry admin key and publisher keys. */
export interface CliRegistry {
  api: PlatformTestApi;
  url: string;
  /** The CLI's working directory (temp), removed by `close`. */
  dir: string;
  admin: string;
  /** The secret of each publisher key, by name. */
  keys: Record<string, string>;
  /** The CLI in this process, against this registry, sending `key` (AP_REGISTRY_KEY), its config dir in `dir`. */
  cli(args: string[], key: string): Promise<CliResult>;
  close(): Promise<void>;
}

/** `config` goes beside the registry's own settings (a test that fetches from loopback sets `network`). */
export async function startCliRegistry(prefix: string, publishers: readonly string[], config: NonNullable<StartPlatformTestApiOptions['config']> = {}): Promise<CliRegistry> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const api = await startPlatformTestApi({
    listen: true,
    config: { ...config, surfaces: { registry: true }, registry: { listen: '127.0.0.1:0', auth: { mode: 'local' } } },
  });
  const url = api.services().find((s): s is RegistryService => s.name === 'registry')!.address!;
  const admin: string = (await registryCall(url, 'POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
  const keys: Record<string, string> = {};
  for (const name of publishers) keys[name] = (await registryCall(url, 'POST', '/keys', { bearer: admin, json: { name, role: 'publisher' } })).body.secret;
  return {
    api,
    url,
    dir,
    admin,
    keys,
    cli: (args, key) => runCliHere(args, { cwd: dir, env: { AP_CLI_CONFIG_DIR: join(dir, 'cli-config'), AP_REGISTRY_URL: url, AP_REGISTRY_KEY: key }, stdin: '' }),
    async close() {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
