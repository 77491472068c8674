import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDevLicenceClaims, generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import { startNodeProcess, type NodeProcess } from './node-process.ts';

const PLATFORM_MAIN = fileURLToPath(new URL('../apps/platform/src/main.ts', import.meta.url));
const CLAIMS_INTAKE = fileURLToPath(new URL('../examples/claims-intake', import.meta.url));

/**
 * Far above any rate this machine can reach: `[agents] rate_limit_per_minute` (default 120)
 * would otherwise turn the send run into a stream of 429s after its first two seconds.
 */
const BENCH_RATE_LIMIT_PER_MINUTE = 1_000_000_000;

export interface PlatformFixtureOptions {
  nodeFlags: string[];
  /** Install examples/claims-intake, activated, and return its agent id. */
  installAgent: boolean;
}

export interface PlatformFixture {
  url: string;
  pid: number;
  /** Bearer secret of an admin key created through the bootstrap rule. */
  token: string;
  /** The claims-intake agent, when installed. */
  agentId: string | null;
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
    await writeConfig(dir);
    platform = startNodeProcess({
      entry: PLATFORM_MAIN,
      args: ['--config', join(dir, 'agent-platform.toml')],
      cwd: dir,
      nodeFlags: options.nodeFlags,
      logFile: join(dir, 'output.log'),
    });
    const url = await platform.listening();
    const key = await postJson<{ secret: string }>(url, '/auth/keys', { name: 'bench', role: 'admin' });
    const agentId = options.installAgent ? await installClaimsIntake(url, key.secret) : null;
    return { url, pid: platform.pid, token: key.secret, agentId, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function writeConfig(dir: string): Promise<void> {
  const data = join(dir, 'data');
  await mkdir(data, { mode: 0o700 });
  const { privateKeyPem, publicKeyPem } = await generateLicenceKeyPair();
  await writeFile(join(data, 'licence-public.pem'), publicKeyPem);
  await writeFile(
    join(data, 'licence.jwt'),
    await issueLicence(privateKeyPem, createDevLicenceClaims(new Date(), 1)),
  );
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
`,
  );
}

async function installClaimsIntake(url: string, token: string): Promise<string> {
  const reply = await postJson<{ installed: Array<{ name: string; id?: string }> }>(
    url,
    '/catalog/install',
    { path: CLAIMS_INTAKE, activate: true },
    token,
  );
  const agent = reply.installed.find((p) => p.name === 'claims-intake');
  if (agent?.id === undefined)
    throw new Error(`claims-intake was not installed as an agent: ${JSON.stringify(reply)}`);
  return agent.id;
}

async function postJson<T>(url: string, path: string, body: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
