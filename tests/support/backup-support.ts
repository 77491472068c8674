import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, PLATFORM_LOADER } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { writeLicence } from './fleet.ts';
import { call, ROOT, startPlatform, type PlatformProcess } from './platform-process.ts';

const CLI_MAIN = join(ROOT, 'apps/platform/src/cli/main.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `agent-platform backup <args>` as an operator runs it (`npm run cli -- backup ...`), in its own process. */
export function backupCli(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', PLATFORM_LOADER, CLI_MAIN, 'backup', ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A platform directory: `agent-platform.toml` (loopback on a free port, auth local, a test licence), data in `<dir>/data`. */
export async function writePlatformConfig(dir: string, extra: Record<string, unknown> = {}): Promise<string> {
  await mkdir(dir, { recursive: true });
  const config = {
    server: { listen: `127.0.0.1:${await freePort()}` },
    storage: { data_dir: join(dir, 'data') },
    auth: { mode: 'local' },
    network: { allow_private_targets: true },
    licence: await writeLicence(dir, {}),
    integrations: { report_interval_secs: 1, restart_backoff_ms: 200, connect_wait_secs: 20 },
    ...extra,
  };
  const path = join(dir, 'agent-platform.toml');
  await writeFile(path, stringify(config));
  return path;
}

/** Starts the all-in-one on `<dir>/agent-platform.toml` and waits for its listener. */
export async function startIn(
  dir: string,
  env: Record<string, string> = {},
): Promise<{ platform: PlatformProcess; url: string }> {
  const platform = startPlatform(dir, ['--config', join(dir, 'agent-platform.toml')], env);
  return { platform, url: await platform.listening(60_000) };
}

/** SIGTERM, then the exit (the platform drains and exits 0). */
export async function stopGracefully(platform: PlatformProcess): Promise<number | null> {
  if (platform.child.exitCode === null && platform.child.signalCode === null) platform.child.kill('SIGTERM');
  return platform.exited;
}

/** Every audit entry, oldest first (GET /security/audit pages newest first). */
export async function auditEntries(
  url: string,
  token: string,
): Promise<Array<{ seq: number; hash: string; action: string; result: string; target: string }>> {
  const res = await call(url, 'GET', '/security/audit?limit=1000', { token });
  return [
    ...(res.body.entries as Array<{
      seq: number;
      hash: string;
      action: string;
      result: string;
      target: string;
    }>),
  ].reverse();
}
