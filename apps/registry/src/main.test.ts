import { spawn } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil, PLATFORM_LOADER } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The registry as an operator starts it (`npm start -w apps/registry -- --config <file>`): its own
// listener, health like the api's plus the archive store, a signing key made at first start, the
// package routes answering in the error envelope, and a drain on SIGTERM.
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
      const child = spawn(process.execPath, ['--import', PLATFORM_LOADER, MAIN, '--config', path], { cwd: ROOT, env: { PATH: process.env.PATH } });
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return { child, exited };
    });
    return { ready, output: () => output };
  }

  it('listens on [registry] listen, reports health, makes its signing key, answers unknown packages 404 in the envelope, exits 0 on SIGTERM', async () => {
    const run = start({ storage: { data_dir: join(dir, 'data') }, registry: { listen: '127.0.0.1:0' } });
    const { child, exited } = await run.ready;
    try {
      await waitUntil(() => /listening on (http:\S+)/.test(run.output()), { timeoutMs: 20_000, message: `the boot line (${run.output()})` });
      expect(run.output()).toContain('agent platform (registry)');
      expect(run.output()).toContain('started: bus embedded, store embedded, queue embedded');
      const url = /listening on (http:\S+)/.exec(run.output())![1]!;
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({
        status: 'ok',
        engines: { store: { status: 'ok' }, bus: { status: 'ok' }, queue: { status: 'ok' } },
        archives: { status: 'ok' },
      });
      const unknown = await fetch(`${url}/packages/claims-intake`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({
        error: { category: 'NotFound', message: "package 'claims-intake' not found", details: { kind: 'package', id: 'claims-intake' } },
      });
      // The key made at first start under <data_dir>/registry is the one GET /signing-key publishes.
      const key = (await (await fetch(`${url}/signing-key`)).json()) as { public_key: string; public_key_pem: string };
      const pem = await readFile(join(dir, 'data', 'registry', 'signing-key.pem'), 'utf8');
      expect(createPublicKey(pem).export({ format: 'pem', type: 'spki' })).toBe(key.public_key_pem);
      expect(run.output()).toContain('registry signing key created');
      const route = await fetch(`${url}/no-such-route`);
      expect(await route.json()).toMatchObject({ error: { category: 'NotFound', details: { kind: 'route' } } });
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

  it('refuses auth mode disabled on a network-reachable bind (the registry boot gate), naming the way out', async () => {
    const run = start({ storage: { data_dir: join(dir, 'data') }, registry: { listen: '0.0.0.0:0' } });
    const { exited } = await run.ready;
    expect(await exited).not.toBe(0);
    expect(run.output()).toMatch(/allow_insecure_no_auth/);
    expect(run.output()).not.toMatch(/listening on/);
  });
});
