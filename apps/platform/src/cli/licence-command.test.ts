import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLicence, validateConfig } from '@agent-platform/config';
import { licenceStatus, EMPTY_LICENCE_USAGE } from '@agent-platform/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliProcess } from './testing/cli-runs.ts';

/** `agent-platform licence <args>` as its own process. */
const cli = (cwd: string, ...args: string[]) => runCliProcess(['licence', ...args], { cwd });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-licence-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const silentLog = { info: () => undefined, warn: () => undefined };

/** The claims of a compact JWS, unverified (the loader checks the signature separately). */
function decodeJwt(token: string): Record<string, unknown> & { iat: number; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

describe('agent-platform licence', () => {
  it('generates a key pair, issues a licence the platform loads with the given budgets', async () => {
    const keygen = await cli(dir, 'keygen', '--out', 'keys');
    expect(keygen).toMatchObject({ code: 0, stdout: expect.stringContaining('licence-private.pem') });
    expect((await stat(join(dir, 'keys', 'licence-private.pem'))).mode & 0o777).toBe(0o600);

    const issued = await cli(
      dir,
      'issue', '--key', 'keys/licence-private.pem', '--carrier-name', 'Acme Mutual', '--carrier-id', 'acme-001',
      '--days', '10', '--budget', 'claims_intake=1000', '--budget', 'servicing=null', '--cloud-spend-usd', '500',
      '--entitlement', 'openai=100', '--providers', 'local,managed_cloud', '--out', 'licence.jwt',
    );
    expect(issued).toMatchObject({ code: 0, stdout: expect.stringContaining('Acme Mutual (acme-001)') });
    const token = (await readFile(join(dir, 'licence.jwt'), 'utf8')).trim();
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      carrier_name: 'Acme Mutual',
      carrier_id: 'acme-001',
      transaction_budgets: { claims_intake: 1000, servicing: null },
      cloud_spend_usd: 500,
      provider_entitlements: [{ provider_id: 'openai', budget_usd: 100 }],
      providers: { local: true, managed_cloud: true },
    });
    expect(claims.exp - claims.iat).toBe(10 * 86_400);

    const config = validateConfig({ licence: { file: 'licence.jwt', public_key_file: 'keys/licence-public.pem' } }, { baseDir: dir, source: 'test' });
    const state = await loadLicence(config, silentLog);
    expect(licenceStatus(state, EMPTY_LICENCE_USAGE, new Date())).toMatchObject({ status: 'active', days_remaining: 9, carrier_id: 'acme-001' });
  });

  it('prints the token to stdout without --out, defaulting to 30 days and the local provider', async () => {
    await cli(dir, 'keygen', '--out', '.');
    const issued = await cli(dir, 'issue', '--key', 'licence-private.pem', '--carrier-name', 'Dev', '--carrier-id', 'dev-1');
    expect(issued.code).toBe(0);
    expect(issued.stderr).toContain('issued licence for Dev (dev-1)');
    const claims = decodeJwt(issued.stdout.trim());
    expect(claims).toMatchObject({ providers: { local: true, managed_cloud: false }, transaction_budgets: {}, provider_entitlements: [] });
    expect(claims.exp - claims.iat).toBe(30 * 86_400);
  });

  it('never overwrites a signing key', async () => {
    expect((await cli(dir, 'keygen', '--out', dir)).code).toBe(0);
    const before = await readFile(join(dir, 'licence-private.pem'), 'utf8');
    const again = await cli(dir, 'keygen', '--out', dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    expect(await readFile(join(dir, 'licence-private.pem'), 'utf8')).toBe(before);
  });

  it('answers a wrong command line with exit code 2 and the usage', async () => {
    await cli(dir, 'keygen', '--out', '.');
    const cases = [
      ['issue', '--key', 'licence-private.pem', '--carrier-id', 'x'],
      ['issue', '--key', 'licence-private.pem', '--carrier-name', 'n', '--carrier-id', 'x', '--budget', 'claims_intake=1.5'],
      ['issue', '--key', 'licence-private.pem', '--carrier-name', 'n', '--carrier-id', 'x', '--dayz', '3'],
      ['rotate'],
    ];
    const results = await Promise.all(cases.map((args) => cli(dir, ...args)));
    results.forEach((res, i) => {
      expect(res.code, cases[i]!.join(' ')).toBe(2);
      expect(res.stderr).toContain('Usage:');
    });
    expect(results[0]!.stderr).toContain('issue needs --carrier-name');
    expect(results[1]!.stderr).toContain("--budget value must be a whole number >= 0 or null (got '1.5')");
    expect(results[3]!.stderr).toContain("unknown action 'rotate'");
    const help = await cli(dir, '--help');
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('agent-platform licence keygen --out <dir>') });
  });

  it('refuses a key that is not an Ed25519 private key', async () => {
    await writeFile(join(dir, 'bogus.pem'), 'not a key');
    const res = await cli(dir, 'issue', '--key', 'bogus.pem', '--carrier-name', 'n', '--carrier-id', 'x');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('not an Ed25519 private key');
    expect(res.stdout).toBe('');
  });
});
