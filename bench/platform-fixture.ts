import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeProcess, type NodeProcess } from './node-process.ts';
import {
  BENCH_RATE_LIMIT_PER_MINUTE,
  bootstrapAdminKey,
  installClaimsIntake,
  writeBenchLicence,
} from './platform-setup.ts';

const PLATFORM_MAIN = fileURLToPath(new URL('../apps/platform/src/main.ts', import.meta.url));

export interface PlatformFixtureOptions {
  nodeFlags: string[];
  /** Install examples/claims-intake, activated, and return its agent id. */
  installAgent: boolean;
  /** TOML appended to the config file (a `[[providers]]` table for the `local` model's delay). */
  extraConfig?: string;
  /** Providers of `extraConfig` the licence must entitle, besides `local` (a model stand-in). */
  providerIds?: string[];
}

export interface PlatformFixture {
  url: string;
  pid: number;
  /** Bearer secret of an admin key created through the bootstrap rule. */
  token: string;
  /** The claims-intake agent, when installed. */
  agentId: string | null;
  /** `[storage] data_dir` of the platform (its embedded store is `platform.db` there). */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * The all-in-one platform (`npm start`) as a user runs it, in a fresh temp dir: a config file
 * (loopback, free port, auth mode local, a development licence for the `local` provider, the
 * agent rate limit out of the way, everything else default, logging included), then the first
 * admin key through the bootstrap rule and, if asked, the claims-intake agent.
 */
export async function startPlatformFixture(options: PlatformFixtureOptions): Promise<PlatformFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-platform-'));
  let platform: NodeProcess | undefined;
  const stop = async () => {
    await platform?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await writeConfig(dir, options.extraConfig ?? '', options.providerIds ?? []);
    platform = startNodeProcess({
      entry: PLATFORM_MAIN,
      args: ['--config', join(dir, 'agent-platform.toml')],
      cwd: dir,
      nodeFlags: options.nodeFlags,
      logFile: join(dir, 'output.log'),
    });
    const url = await platform.listening();
    const token = await bootstrapAdminKey(url);
    const agentId = options.installAgent ? await installClaimsIntake(url, token) : null;
    return { url, pid: platform.pid, token, agentId, dataDir: join(dir, 'data'), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function writeConfig(dir: string, extraConfig: string, providerIds: string[]): Promise<void> {
  await writeBenchLicence(join(dir, 'data'), providerIds);
  await writeFile(
    join(dir, 'agent-platform.toml'),
    `[server]
listen = "127.0.0.1:0"

[storage]
data_dir = "./data"

[auth]
mode = "local"

[licence]
file = "./data/licence.jwt"
public_key_file = "./data/licence-public.pem"

[agents]
rate_limit_per_minute = ${BENCH_RATE_LIMIT_PER_MINUTE}
${extraConfig}`,
  );
}
