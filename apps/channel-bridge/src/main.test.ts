import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireBinary, startNatsServer, waitUntil, type NatsServerHandle, PLATFORM_LOADER } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The bridge as an operator starts it (`npm start -w apps/channel-bridge -- --config <file>`):
// it starts on the shared engines (JetStream: replies are a durable stream) and stops cleanly.
// Running channels and failing over is tests/e2e/fleet-channels.test.ts.
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const natsBinary = requireBinary('nats-server');

describe.skipIf(natsBinary === null)('channel-bridge main', () => {
  let nats: NatsServerHandle;
  let dir: string;
  beforeAll(async () => {
    nats = await startNatsServer();
    dir = await mkdtemp(join(tmpdir(), 'ap-bridge-main-'));
  });
  afterAll(async () => {
    await nats?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts on the configured engines and exits 0 on SIGTERM', async () => {
    const config = join(dir, 'bridge.toml');
    await writeFile(config, stringify({ storage: { data_dir: join(dir, 'data') }, runtime: { bus: 'nats', nats_url: nats.url } }));
    let output = '';
    const child = spawn(process.execPath, ['--import', PLATFORM_LOADER, MAIN, '--config', config], { cwd: ROOT, env: { PATH: process.env.PATH } });
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitUntil(() => output.includes('agent platform (channel-bridge)'), { timeoutMs: 20_000, message: `the boot line (${output})` });
      expect(output).toContain('started: bus nats, store embedded, queue embedded');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
