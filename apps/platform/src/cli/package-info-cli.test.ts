import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXAMPLES_DIR, openExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from './testing/cli-runs.ts';
import { startCliRegistry, type CliRegistry } from './testing/cli-registry.ts';

// `agent-platform package info <name>` (docs/packages.md "Publishing") against a real registry,
// the all-in-one's in auth mode local: what a publisher did with the other commands (two
// versions, a security yank, a deprecation, a dist-tag, a dependent, downloads) shows on the page.
let registry: CliRegistry;
let url: string;
let dir: string;
let alice: string;

beforeAll(async () => {
  registry = await startCliRegistry('ap-package-info-cli-', ['alice']);
  ({ url, dir } = registry);
  alice = registry.keys['alice']!;
}, 60_000);
afterAll(async () => registry?.close());

function cli(args: string[]): Promise<CliResult> {
  return registry.cli(args, alice);
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
