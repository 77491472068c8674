import { LicenceClaims } from '@agent-platform/contracts';
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT } from 'jose';
import { Value } from 'typebox/value';
import { describeSchemaErrors } from './schema-errors.ts';

/** The JWS algorithm of every licence (DECISIONS D3): EdDSA over Ed25519. */
export const LICENCE_ALG = 'EdDSA';

const DAY_SECS = 24 * 60 * 60;

/** A fresh Ed25519 key pair for signing licences, as PEM (SPKI public, PKCS#8 private). */
export async function generateLicenceKeyPair(): Promise<{ publicKeyPem: string; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateKeyPair(LICENCE_ALG, { crv: 'Ed25519', extractable: true });
  return { publicKeyPem: await exportSPKI(publicKey), privateKeyPem: await exportPKCS8(privateKey) };
}

/**
 * Signs `claims` as a licence (a compact JWS). The claims are checked against the contract first,
 * so that an issuer cannot hand out a licence every platform would then reject as malformed.
 */
export async function issueLicence(privateKeyPem: string, claims: LicenceClaims): Promise<string> {
  if (!Value.Check(LicenceClaims, claims)) {
    throw new TypeError(`invalid licence claims: ${describeSchemaErrors(LicenceClaims, claims).join('; ')}`);
  }
  const key = await importPKCS8(privateKeyPem, LICENCE_ALG);
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: LICENCE_ALG, typ: 'JWT' }).sign(key);
}

/**
 * The claims of a development licence (DECISIONS D1): `days` long from `now`, the built-in local
 * provider only, no budgets.
 */
export function createDevLicenceClaims(now: Date, days = 30): LicenceClaims {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + days * DAY_SECS;
  return {
    carrier_name: 'Development',
    carrier_id: 'dev-local',
    iat,
    exp,
    period_start: isoSeconds(iat),
    period_end: isoSeconds(exp),
    transaction_budgets: {},
    provider_entitlements: [],
    providers: { local: true, managed_cloud: false },
  };
}

function isoSeconds(epochSecs: number): string {
  return new Date(epochSecs * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
