import { PLATFORM_LOADER } from '@agent-platform/testkit';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAuditTrail, systemClock } from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toTomlText } from './testing/toml-text.ts';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** The repository root, where `--import tsx` resolves (main.ts runs as source, like `npm start`). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let dir: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-main-'));
});
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** Starts `main.ts` as an operator would; collects output and resolves the exit code. */
function start(): { output: () => string; exited: Promise<number | null> } {
  let output = '';
  child = spawn(process.execPath, ['--import', PLATFORM_LOADER, MAIN, '--config', join(dir, 'agent-platform.toml')], { cwd: ROOT, env: { PATH: process.env.PATH } });
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child?.on('exit', (code) => resolve(code)));
  return { output: () => output, exited };
}

async function writeConfig(auth: Record<string, unknown>): Promise<void> {
  const config = { server: { listen: '0.0.0.0:0' }, storage: { data_dir: join(dir, 'data') }, auth };
  await writeFile(join(dir, 'agent-platform.toml'), toTomlText(config));
}

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('boot gate (spec §Authentication rule 4)', () => {
  it('refuses auth mode disabled on a non-loopback bind, naming the reason', async () => {
    await writeConfig({ mode: 'disabled' });
    const run = start();
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('refusing to start');
    expect(run.output()).toContain('allow_insecure_no_auth');
  });

  it('starts with allow_insecure_no_auth, warns, audits boot and a graceful SIGTERM stop', async () => {
    await writeConfig({ mode: 'disabled', allow_insecure_no_auth: true });
    const run = start();
    await until(() => run.output().includes('listening on'), 'the listening line');
    expect(run.output()).toContain('auth is disabled on the non-loopback address');
    child?.kill('SIGTERM');
    expect(await run.exited).toBe(0);

    const store = await openEmbeddedStore({ path: join(dir, 'data', 'platform.db') });
    try {
      const entries = await createAuditTrail({ store, clock: systemClock, enabled: true }).query({ limit: 10, category: 'system' });
      expect(entries.map((e) => e.action)).toEqual(['platform.shutdown', 'platform.boot']);
      expect(entries[0]?.metadata).toMatchObject({ reason: 'SIGTERM' });
    } finally {
      await store.close();
    }
  });
});

describe('audit checkpoints in a real process', () => {
  it('makes the checkpoint key (0600) at first start and writes scheduled checkpoints to the sink', async () => {
    const sink = join(dir, 'sink');
    const config = {
      server: { listen: '127.0.0.1:0' },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      audit: { checkpoints: { sink, interval_secs: 1 } },
    };
    await writeFile(join(dir, 'agent-platform.toml'), toTomlText(config));
    const run = start();
    await until(() => run.output().includes('listening on'), 'the listening line');
    let written: string[] = [];
    const deadline = Date.now() + 15_000;
    while (written.length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      written = await readdir(join(sink, 'checkpoints')).catch(() => []);
    }
    child?.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(written.length).toBeGreaterThanOrEqual(2);
    expect((await stat(join(dir, 'data', 'audit-checkpoint-key.pem'))).mode & 0o777).toBe(0o600);
  });
});

describe('the boot gate covers the mcp surface (spec §Authentication rule 4, docs/mcp.md)', () => {
  const writeMcpConfig = (auth: Record<string, unknown>) =>
    writeFile(
      join(dir, 'agent-platform.toml'),
      toTomlText({
        server: { listen: '0.0.0.0:0' },
        storage: { data_dir: join(dir, 'data') },
        surfaces: { api: false, mcp: true },
        auth,
      }),
    );

  it('refuses [surfaces] mcp with auth disabled on a non-loopback bind, even with the api surface off', async () => {
    await writeMcpConfig({ mode: 'disabled' });
    const run = start();
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('refusing to start');
    expect(run.output()).toContain('allow_insecure_no_auth');
  });

  it('starts it with allow_insecure_no_auth, warning, and serves /mcp on the api listener', async () => {
    await writeMcpConfig({ mode: 'disabled', allow_insecure_no_auth: true });
    const run = start();
    await until(() => /listening on \S+/.test(run.output()), 'the listening line');
    expect(run.output()).toContain('auth is disabled on the non-loopback address');
    const port = new URL(/listening on (\S+)/.exec(run.output())![1]!).port;
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { tools: Array<{ name: string }> } };
    expect(body.result.tools).toHaveLength(5);
    child?.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });
});
