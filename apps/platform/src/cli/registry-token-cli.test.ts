import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openExampleArchives, registryCall } from '@agent-platform/registry-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from './testing/cli-runs.ts';
import { startCliRegistry, type CliRegistry } from './testing/cli-registry.ts';

// `agent-platform registry token create|list|revoke` (docs/registry-auth.md "Tokens") against a
// real registry: the all-in-one's, in auth mode local. The publisher's own key is the stored login;
// the token made is then used as AP_REGISTRY_KEY by `package publish`.
let registry: CliRegistry;
let url: string;
let dir: string;
let alice: string;
let admin: string;

beforeAll(async () => {
  registry = await startCliRegistry('ap-registry-token-cli-', ['alice']);
  ({ url, dir, admin } = registry);
  alice = registry.keys['alice']!;
}, 60_000);
afterAll(async () => registry?.close());

function cli(args: string[], key = alice): Promise<CliResult> {
  return registry.cli(args, key);
}

describe('agent-platform registry token', () => {
  it('makes a token (secret on stdout, once), lists it, publishes with it, and revokes it', async () => {
    const made = await cli(['registry', 'token', 'create', '--name', 'ci', '--scope', 'publish-new', '--scope', 'publish-update', '--package', 'loss-*', '--expires-in', '30d']);
    expect(made.code, made.stderr).toBe(0);
    const secret = made.stdout.trim();
    expect(secret).toMatch(/^reg_pt_\S+$/);
    expect(made.stderr).toContain('ci: publish-new, publish-update on loss-*, expires ');
    expect(made.stderr).toContain('it is not shown again');

    const listed = await cli(['registry', 'token', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('ci: publish-new, publish-update on loss-*');
    expect(listed.stdout).not.toContain(secret);
    const id = listed.stdout.split(/\s+/)[0]!;

    const examples = await openExampleArchives();
    const archive = join(dir, 'loss-summary.tar.gz');
    await writeFile(archive, await examples.build('loss-summary'));
    await examples.close();
    const published = await cli(['package', 'publish', archive], secret);
    expect(published.code, published.stderr).toBe(0);
    expect((await registryCall(url, 'GET', '/packages/loss-summary')).body.owners).toEqual(['key:alice']);

    const revoked = await cli(['registry', 'token', 'revoke', id]);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked token ${id} (ci) on ${url}.\n` });
    expect((await cli(['registry', 'token', 'list'])).stdout).toContain(`${id}  revoked ci`);
    const refused = await cli(['package', 'publish', archive], secret);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('answered 401');
  });

  it('package deprecate marks a package the caller owns, and --undo takes it off; package tag sets and removes dist-tags', async () => {
    // loss-summary was published as alice by the first test (tests of this file run in order).
    const marked = await cli(['package', 'deprecate', 'loss-summary', '--message', 'use loss-digest']);
    expect(marked).toMatchObject({ code: 0, stdout: `Deprecated loss-summary on ${url}: use loss-digest\n` });
    expect((await registryCall(url, 'GET', '/packages/loss-summary')).body.deprecated).toMatchObject({ message: 'use loss-digest', deprecated_by: 'key:alice' });
    const bob = (await registryCall(url, 'POST', '/keys', { bearer: admin, json: { name: 'bob', role: 'publisher' } })).body.secret;
    const refused = await cli(['package', 'deprecate', 'loss-summary', '--undo'], bob);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('answered 403');
    expect(await cli(['package', 'deprecate', 'loss-summary', '--undo'])).toMatchObject({ code: 0, stdout: `loss-summary is no longer deprecated on ${url}\n` });
    expect((await registryCall(url, 'GET', '/packages/loss-summary')).body.deprecated).toBeNull();
    // Dist-tags the same way.
    expect(await cli(['package', 'tag', 'loss-summary', 'next', '1.0.0'])).toMatchObject({ code: 0, stdout: `Tagged loss-summary 1.0.0 as next on ${url}; tags: latest 1.0.0, next 1.0.0\n` });
    expect(await cli(['package', 'tag', 'loss-summary', 'next', '--remove'])).toMatchObject({ code: 0, stdout: `Removed the tag next of loss-summary on ${url}; tags: latest 1.0.0\n` });
    expect((await cli(['package', 'tag', 'loss-summary', 'latest', '1.0.0'])).code).toBe(1);
    for (const args of [
      ['package', 'deprecate'],
      ['package', 'deprecate', 'loss-summary'],
      ['package', 'deprecate', 'loss-summary', '--undo', '--message', 'x'],
      ['package', 'tag', 'loss-summary', 'next'],
      ['package', 'tag', 'loss-summary', 'next', '1.0.0', '--remove'],
    ]) {
      expect((await cli(args)).code, args.join(' ')).toBe(2);
    }
  });

  it('refuses a bad command line with exit 2 before calling the registry, and a refused call with exit 1', async () => {
    for (const args of [
      ['registry', 'token'],
      ['registry', 'token', 'make'],
      ['registry', 'token', 'create', '--scope', 'yank'],
      ['registry', 'token', 'create', '--name', 'x'],
      ['registry', 'token', 'create', '--name', 'x', '--scope', 'admin'],
      ['registry', 'token', 'revoke'],
    ]) {
      const res = await cli(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).not.toBe('');
    }
    const bad = await cli(['registry', 'token', 'create', '--name', 'x', '--scope', 'yank', '--package', 'Bad Name']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('answered 400: ValidationError');
    expect((await cli(['registry', 'token', 'revoke', '6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11'])).code).toBe(1);
  });
});
