import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startOidcProvider, tokenForger, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { openExampleArchives, registryCall } from '@agent-platform/registry-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from './testing/cli-runs.ts';
import { startCliRegistry, type CliRegistry } from './testing/cli-registry.ts';

// `agent-platform registry trusted-publisher set|list` (docs/registry-auth.md "Trusted publishing")
// against the all-in-one's registry in auth mode local, a real OpenID provider on loopback as the
// CI issuer. The owner names the CI identity with the CLI; the CI job's exchanged token then
// publishes with `package publish`.
const AUDIENCE = 'https://registry.cli.example';
let registry: CliRegistry;
let provider: OidcProviderHarness;
let url: string;
let dir: string;
let alice: string;

beforeAll(async () => {
  provider = await startOidcProvider({ audience: AUDIENCE, clients: {} });
  registry = await startCliRegistry('ap-registry-trusted-cli-', ['alice'], { network: { allow_private_targets: true } });
  ({ url, dir } = registry);
  alice = registry.keys['alice']!;
  const registered = await registryCall(url, 'POST', '/admin/issuers', {
    bearer: registry.admin,
    json: { issuer: provider.issuer, audience: AUDIENCE, jwks_uri: '', role_claim: 'registry_role', allowed_algorithms: ['RS256'], role_mapping: { never: 'reader' }, jwks_cache_ttl_secs: 300 },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  await registry?.close();
  await provider?.close();
});

function cli(args: string[], key = alice): Promise<CliResult> {
  return registry.cli(args, key);
}

describe('agent-platform registry trusted-publisher', () => {
  it('sets and lists the trusted publishers; the exchanged CI token publishes with package publish', async () => {
    const examples = await openExampleArchives();
    const archive = (name: string) => join(dir, `${name}.tar.gz`);
    await writeFile(archive('v1'), await examples.build('loss-summary'));
    await writeFile(archive('v2'), await examples.build('loss-summary', { version: '1.1.0' }));
    await examples.close();
    expect((await cli(['package', 'publish', archive('v1')])).code).toBe(0);

    const set = await cli(['registry', 'trusted-publisher', 'set', 'loss-summary', '--issuer', provider.issuer, '--claim', 'repository=acme/loss-summary', '--claim', 'workflow=release.yml']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`${provider.issuer}  repository=acme/loss-summary workflow=release.yml`);
    expect((await cli(['registry', 'trusted-publisher', 'list', 'loss-summary'])).stdout).toContain('repository=acme/loss-summary workflow=release.yml');
    const bad = await cli(['registry', 'trusted-publisher', 'set', 'loss-summary', '--issuer', provider.issuer, '--claim', 'repository']);
    expect(bad.code).toBe(2);

    const jwt = await tokenForger(provider, { audience: AUDIENCE, roles: [] }).forge({ sub: 'ci', repository: 'acme/loss-summary', workflow: 'release.yml', sha: 'abc1', realm_access: undefined }, { typ: 'JWT' });
    const minted = await registryCall(url, 'POST', '/trusted-publishing/exchange', { json: { token: jwt } });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    const published = await cli(['package', 'publish', archive('v2')], minted.body.token);
    expect(published.code, published.stderr).toBe(0);
    expect((await registryCall(url, 'GET', '/packages/loss-summary/1.1.0')).body.provenance).toMatchObject({ identity: `${provider.issuer}#ci`, claims: { sha: 'abc1' } });
    // The version's provenance, as `package info` shows it; the key-published 1.0.0 has none.
    const page = (await cli(['package', 'info', 'loss-summary'])).stdout.split('\n');
    const v2 = page.find((l) => l.startsWith('1.1.0 '));
    expect(v2).toContain(`provenance ${provider.issuer}#ci (`);
    expect(v2).toContain('repository=acme/loss-summary');
    expect(v2).toContain('sha=abc1');
    expect(page.find((l) => l.startsWith('1.0.0 '))).not.toContain('provenance');

    expect((await cli(['registry', 'trusted-publisher', 'set', 'loss-summary', '--none'])).stdout).toContain('Trusted publishing of loss-summary is off');
    expect((await cli(['registry', 'trusted-publisher', 'list', 'loss-summary'])).stdout).toContain('No trusted publishers for loss-summary');
  });
});
