import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LicenceClaims, PlatformConfig } from '@agent-platform/contracts';
import { generateKeyPair, importPKCS8, SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runFirstRunSetup } from './first-run.ts';
import { createDevLicenceClaims, generateLicenceKeyPair, issueLicence } from './licence-keys.ts';
import { loadLicence, type LicenceLog } from './licence-loader.ts';
import { defaultConfig } from './validate-config.ts';

const ISSUED = new Date('2026-01-01T00:00:00.000Z');

let dir: string;
let lines: Array<{ level: 'info' | 'warn'; fields: Record<string, unknown>; message: string }>;
const log: LicenceLog = {
  info: (fields, message) => lines.push({ level: 'info', fields, message }),
  warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-licence-load-'));
  lines = [];
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function config(licence: PlatformConfig['licence']): PlatformConfig {
  return { ...defaultConfig(), licence };
}

/** Writes a key pair and a licence signed with it; returns the config pointing at them. */
async function setup(claims: LicenceClaims = createDevLicenceClaims(ISSUED)): Promise<{ config: PlatformConfig; token: string; privateKeyPem: string }> {
  const { publicKeyPem, privateKeyPem } = await generateLicenceKeyPair();
  const token = await issueLicence(privateKeyPem, claims);
  await writeFile(join(dir, 'licence.jwt'), `${token}\n`);
  await writeFile(join(dir, 'public.pem'), publicKeyPem);
  return { config: config({ file: join(dir, 'licence.jwt'), public_key_file: join(dir, 'public.pem') }), token, privateKeyPem };
}

async function expectNone(cfg: PlatformConfig, reason: RegExp): Promise<void> {
  const state = await loadLicence(cfg, log);
  expect(state.kind).toBe('none');
  if (state.kind === 'none') expect(state.reason).toMatch(reason);
  expect(lines.at(-1)).toMatchObject({ level: 'warn', fields: { reason: expect.stringMatching(reason) } });
}

describe('loadLicence', () => {
  it('loads a licence signed with the configured key and logs who it is for', async () => {
    const claims = { ...createDevLicenceClaims(ISSUED), carrier_id: 'acme-001', transaction_budgets: { claims_intake: 10 } };
    const { config: cfg, token } = await setup(claims);
    expect(await loadLicence(cfg, log)).toEqual({ kind: 'loaded', licence: claims });
    expect(lines).toEqual([{ level: 'info', fields: expect.objectContaining({ carrier_id: 'acme-001' }), message: 'licence loaded' }]);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it('loads the development licence the first-run setup writes', async () => {
    const loaded = await runFirstRunSetup({ cwd: dir, env: {}, log: () => undefined, now: () => ISSUED });
    expect(await loadLicence(loaded.config, log)).toMatchObject({
      kind: 'loaded',
      licence: { carrier_id: 'dev-local', providers: { local: true, managed_cloud: false }, exp: ISSUED.getTime() / 1000 + 30 * 86_400 },
    });
  });

  it('still loads an expired licence, so that its status can say expired', async () => {
    const { config: cfg } = await setup(createDevLicenceClaims(new Date('2020-01-01T00:00:00Z'), 1));
    expect(await loadLicence(cfg, log)).toMatchObject({ kind: 'loaded', licence: { exp: Date.parse('2020-01-02T00:00:00Z') / 1000 } });
  });

  it('counts a licence signed by another key as none, and never logs the token', async () => {
    const { config: cfg, token } = await setup();
    await writeFile(join(dir, 'public.pem'), (await generateLicenceKeyPair()).publicKeyPem);
    await expectNone(cfg, /signature does not verify/);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it('counts an altered payload as none', async () => {
    const { config: cfg, token } = await setup();
    const [header, , signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...createDevLicenceClaims(ISSUED), transaction_budgets: {}, carrier_id: 'thief' })).toString('base64url');
    await writeFile(join(dir, 'licence.jwt'), `${header}.${forged}.${signature}`);
    await expectNone(cfg, /signature does not verify/);
  });

  it('reports missing settings and unreadable files', async () => {
    await expectNone(config({}), /no \[licence\] file is configured/);
    await expectNone(config({ file: join(dir, 'licence.jwt') }), /no \[licence\] public_key_file/);
    await expectNone(config({ file: join(dir, 'absent.jwt'), public_key_file: join(dir, 'public.pem') }), /licence file cannot be read \(ENOENT\)/);
    const { config: cfg } = await setup();
    await expectNone({ ...cfg, licence: { ...cfg.licence, public_key_file: join(dir, 'absent.pem') } }, /public key file cannot be read \(ENOENT\)/);
  });

  it('refuses a public key that is not Ed25519 and a file that is not a JWS', async () => {
    const { config: cfg } = await setup();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    await writeFile(join(dir, 'public.pem'), rsa);
    await expectNone(cfg, /not hold an Ed25519 public key/);

    const good = await setup();
    await writeFile(join(dir, 'licence.jwt'), 'not a token');
    await expectNone(good.config, /not hold a compact JWS/);
  });

  it('refuses claims of the wrong shape even when the signature is good', async () => {
    const { config: cfg, privateKeyPem } = await setup();
    const privateKey = await importPKCS8(privateKeyPem, 'EdDSA');
    const { providers: _dropped, ...claims } = createDevLicenceClaims(ISSUED);
    await writeFile(join(dir, 'licence.jwt'), await new SignJWT({ ...claims, carrier_id: '' }).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey));
    await expectNone(cfg, /claims are malformed: .*(providers.*carrier_id|carrier_id.*providers)/);

    const backwards = { ...createDevLicenceClaims(ISSUED), period_end: '2025-01-01T00:00:00Z' };
    await writeFile(join(dir, 'licence.jwt'), await new SignJWT(backwards).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey));
    await expectNone(cfg, /period_end must be after period_start/);
  });

  it('refuses a token signed with another algorithm', async () => {
    const { config: cfg } = await setup();
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ ...createDevLicenceClaims(ISSUED) }).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    await writeFile(join(dir, 'licence.jwt'), token);
    await expectNone(cfg, /not signed with EdDSA/);
  });
});
