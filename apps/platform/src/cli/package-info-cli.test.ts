import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryService } from '@agent-platform/registry';
import { EXAMPLES_DIR, openExampleArchives, registryCall } from '@agent-platform/registry-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';
import { runCliHere, type CliResult } from './testing/cli-runs.ts';

// `agent-platform package info <name>` (docs/packages.md "Publishing") against a real registry,
// the all-in-one's in auth mode local: what a publisher did with the other commands (two
// versions, a security yank, a deprecation, a dist-tag, a dependent, downloads) shows on the page.
let api: PlatformTestApi;
let url: string;
let dir: string;
let alice: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-package-info-cli-'));
  api = await startPlatformTestApi({
    listen: true,
    config: { surfaces: { registry: true }, registry: { listen: '127.0.0.1:0', auth: { mode: 'local' } } },
  });
  url = api.services().find((s): s is RegistryService => s.name === 'registry')!.address!;
  const admin = (await registryCall(url, 'POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
  alice = (await registryCall(url, 'POST', '/keys', { bearer: admin, json: { name: 'alice', role: 'publisher' } })).body.secret;
}, 60_000);
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<CliResult> {
  return runCliHere(args, { cwd: dir, env: { AP_CLI_CONFIG_DIR: join(dir, 'cli-config'), AP_REGISTRY_URL: url, AP_REGISTRY_KEY: alice }, stdin: '' });
}

describe('agent-platform package info', () => {
  it('shows the package page: links, deprecation, owners, tags, each version with its downloads and yank, dependents, README, install', async () => {
    const examples = await openExampleArchives();
    await writeFile(join(dir, 'loss-summary-1.0.0.tar.gz'), await examples.build('loss-summary'));
    await writeFile(join(dir, 'fnol-triage-1.0.0.tar.gz'), await examples.build('fnol-triage'));
    await examples.close();
    // 1.1.0 from a directory with a README, as a publisher's checkout is.
    const checkout = join(dir, 'loss-summary');
    await cp(join(EXAMPLES_DIR, 'loss-summary'), checkout, { recursive: true });
    const manifest = join(checkout, 'package.toml');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace(/^version = "1\.0\.0"$/m, 'version = "1.1.0"'));
    await writeFile(join(checkout, 'README.md'), '# Loss summary\n\nWrites the FNOL summary.\n');
    for (const target of ['loss-summary-1.0.0.tar.gz', 'loss-summary', 'fnol-triage-1.0.0.tar.gz']) {
      const published = await cli(['package', 'publish', join(dir, target)]);
      expect(published.code, published.stderr).toBe(0);
    }
    for (let i = 0; i < 3; i++) {
      const download = await fetch(`${url}/packages/loss-summary/1.1.0/download`, { headers: { authorization: `Bearer ${alice}` } });
      expect(download.status).toBe(200);
      await download.arrayBuffer();
    }
    expect((await cli(['package', 'yank', 'loss-summary', '1.0.0', '--reason', 'leaks claimant data', '--security'])).code).toBe(0);
    expect((await cli(['package', 'deprecate', 'loss-summary', '--message', 'use loss-digest'])).code).toBe(0);
    expect((await cli(['package', 'tag', 'loss-summary', 'next', '1.1.0'])).code).toBe(0);

    const shown = await cli(['package', 'info', 'loss-summary']);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toMatch(/^loss-summary 1\.1\.0 \(skill\): \S/);
    expect(shown.stdout).toMatch(/^ {2}DEPRECATED: use loss-digest \(key:alice, \d{4}-\d\d-\d\dT/m);
    expect(lines).toContain('  owners: key:alice');
    expect(lines).toContain('  tags: latest 1.1.0, next 1.1.0');
    expect(lines).toContain('  install: POST /catalog/install {"name":"loss-summary","version":"^1.1.0"}');
    const header = lines.findIndex((l) => l.startsWith('VERSION'));
    expect(lines[header]).toMatch(/^VERSION +PUBLISHED +BY +DOWNLOADS +NOTES$/);
    expect(lines[header + 1]).toMatch(/^1\.1\.0 +\S+Z +key:alice +3$/);
    expect(lines[header + 2]).toMatch(/^1\.0\.0 +\S+Z +key:alice +0 +yanked \(security\): leaks claimant data$/);
    expect(lines).toContain('downloads: 3 in all, 3 in the last 90 days');
    expect(lines).toContain('dependents: fnol-triage 1.0.0 (^1.0.0)');
    expect(lines).toContain(`readme: ${url}/packages/loss-summary/readme`);

    const plain = await cli(['package', 'info', 'fnol-triage']);
    expect(plain.stdout).toContain('dependents: none');
    expect(plain.stdout).not.toContain('DEPRECATED');
    expect(plain.stdout).not.toContain('readme:');
  });

  it('fails clearly for a package the registry does not know (1) and a wrong command line (2)', async () => {
    const unknown = await cli(['package', 'info', 'no-such-package']);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toBe(`agent-platform package info: ${url} has no package no-such-package\n`);
    expect((await cli(['package', 'info'])).code).toBe(2);
    expect((await cli(['package', 'info', 'a', 'b'])).code).toBe(2);
  });
});
