import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The registry as an operator starts it (`npm start -w apps/registry -- --config <file>`). Its
// routes arrive with the registry issue; what it owes a fleet today is to start on its own
// listener, report health like the api, answer unknown paths in the error envelope and drain.
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('registry main', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-registry-main-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function start(config: Record<string, unknown>) {
    const path = join(dir, 'registry.toml');
    let output = '';
    const ready = writeFile(path, stringify(config)).then(() => {
      const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--config', path], { cwd: ROOT, env: { PATH: process.env.PATH } });
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return { child, exited };
    });
    return { ready, output: () => output };
  }

  it('listens on [registry] listen, reports engine health, answers unknown paths 404 in the envelope, exits 0 on SIGTERM', async () => {
    const run = start({ storage: { data_dir: join(dir, 'data') }, registry: { listen: '127.0.0.1:0' } });
    const { child, exited } = await run.ready;
    try {
      await waitUntil(() => /listening on (http:\S+)/.test(run.output()), { timeoutMs: 20_000, message: `the boot line (${run.output()})` });
      expect(run.output()).toContain('agent platform (registry)');
      expect(run.output()).toContain('started: bus embedded, store embedded, queue embedded');
      const url = /listening on (http:\S+)/.exec(run.output())![1]!;
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', engines: { store: { status: 'ok' }, bus: { status: 'ok' }, queue: { status: 'ok' } } });
      const unknown = await fetch(`${url}/packages/claims-intake`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({
        error: { category: 'NotFound', message: "route 'GET /packages/claims-intake' not found", details: { kind: 'route', id: 'GET /packages/claims-intake' } },
      });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses to start with a clear message when [registry] listen is not an address', async () => {
    const run = start({ storage: { data_dir: join(dir, 'data') }, registry: { listen: 'nowhere' } });
    const { exited } = await run.ready;
    expect(await exited).not.toBe(0);
    expect(run.output()).toMatch(/registry\.listen/);
  });
});
