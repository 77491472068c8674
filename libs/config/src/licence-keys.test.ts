import { LicenceClaims } from '@agent-platform/contracts';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { createDevLicenceClaims, generateLicenceKeyPair, issueLicence } from './licence-keys.ts';

const NOW = new Date('2026-11-01T00:00:00.000Z');

describe('licence signing', () => {
  it('issues an EdDSA licence that verifies with the public key and carries the D3 claims', async () => {
    const { publicKeyPem, privateKeyPem } = await generateLicenceKeyPair();
    expect(publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const claims: LicenceClaims = {
      ...createDevLicenceClaims(NOW),
      carrier_name: 'Acme Mutual',
      carrier_id: 'acme-001',
      transaction_budgets: { claims_intake: 1000, servicing: null },
      cloud_spend_usd: 500,
      provider_entitlements: [{ provider_id: 'openai', budget_usd: 100 }],
    };
    const token = await issueLicence(privateKeyPem, claims);
    expect(decodeProtectedHeader(token).alg).toBe('EdDSA');
    const { payload } = await jwtVerify(token, await importSPKI(publicKeyPem, 'EdDSA'), { currentDate: NOW });
    expect(payload).toEqual(claims);
    expect(Value.Check(LicenceClaims, payload)).toBe(true);
  });

  it('does not verify with another key pair', async () => {
    const signer = await generateLicenceKeyPair();
    const other = await generateLicenceKeyPair();
    const token = await issueLicence(signer.privateKeyPem, createDevLicenceClaims(NOW));
    await expect(jwtVerify(token, await importSPKI(other.publicKeyPem, 'EdDSA'), { currentDate: NOW })).rejects.toThrow(/signature/);
  });

  it('refuses to sign malformed claims', async () => {
    const { privateKeyPem } = await generateLicenceKeyPair();
    const bad = { ...createDevLicenceClaims(NOW), period_start: 'yesterday', carrier_id: '' };
    await expect(issueLicence(privateKeyPem, bad)).rejects.toThrow(/period_start.*carrier_id|carrier_id.*period_start/);
  });

  it('makes development claims: 30 days, local provider only, no budgets', () => {
    const claims = createDevLicenceClaims(NOW);
    expect(claims).toEqual({
      carrier_name: 'Development',
      carrier_id: 'dev-local',
      iat: NOW.getTime() / 1000,
      exp: NOW.getTime() / 1000 + 30 * 86400,
      period_start: '2026-11-01T00:00:00Z',
      period_end: '2026-12-01T00:00:00Z',
      transaction_budgets: {},
      provider_entitlements: [],
      providers: { local: true, managed_cloud: false },
    });
  });
});
