import { readFile } from 'node:fs/promises';
import { LicenceClaims, type PlatformConfig } from '@agent-platform/contracts';
import type { LicenceState } from '@agent-platform/domain';
import { compactVerify, errors, importSPKI } from 'jose';
import { Value } from 'typebox/value';
import { LICENCE_ALG } from './licence-keys.ts';
import { describeSchemaErrors } from './schema-errors.ts';

/** Where `loadLicence` reports the outcome; a pino logger fits. */
export interface LicenceLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * Reads and verifies the licence of `[licence]` (DECISIONS D3): a compact JWS signed with EdDSA,
 * checked against the Ed25519 SPKI PEM of `public_key_file`, whose payload must match
 * `LicenceClaims`. Anything wrong (no file configured, unreadable file, wrong key, bad
 * signature, malformed token or claims) gives `{kind: 'none', reason}`, logged as a warning:
 * the platform runs, and every model invocation is refused. Never throws.
 *
 * Expiry is deliberately not checked here (`compactVerify`, not `jwtVerify`, which would reject
 * an expired token): an expired licence must still load so that GET /licence/status can say
 * `expired`; the licence gate refuses its invocations. The token is never logged; reasons name
 * the problem and the log line carries the file paths.
 */
export async function loadLicence(config: PlatformConfig, log: LicenceLog): Promise<LicenceState> {
  const files = { file: config.licence.file ?? null, public_key_file: config.licence.public_key_file ?? null };
  const state = await readLicence(files.file, files.public_key_file);
  if (state.kind === 'loaded') {
    const { carrier_name, carrier_id, exp, period_start, period_end } = state.licence;
    log.info(
      { ...files, carrier_name, carrier_id, expires_at: new Date(exp * 1000).toISOString(), period_start, period_end },
      'licence loaded',
    );
  } else {
    log.warn({ ...files, reason: state.reason }, `no licence loaded (${state.reason}): every model invocation is refused`);
  }
  return state;
}

async function readLicence(file: string | null, publicKeyFile: string | null): Promise<LicenceState> {
  if (file === null) return none('no [licence] file is configured');
  if (publicKeyFile === null) return none('no [licence] public_key_file is configured');
  const token = await readText(file);
  if (typeof token !== 'string') return none(`the licence file cannot be read (${token.code})`);
  const pem = await readText(publicKeyFile);
  if (typeof pem !== 'string') return none(`the licence public key file cannot be read (${pem.code})`);

  let key: Awaited<ReturnType<typeof importSPKI>>;
  try {
    key = await importSPKI(pem.trim(), LICENCE_ALG);
  } catch {
    return none('the licence public key file does not hold an Ed25519 public key (PEM, SPKI)');
  }
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(token.trim(), key, { algorithms: [LICENCE_ALG] }));
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return none('the licence signature does not verify against the configured public key');
    }
    if (error instanceof errors.JOSEAlgNotAllowed) return none(`the licence is not signed with ${LICENCE_ALG}`);
    return none('the licence file does not hold a compact JWS (a signed JWT)');
  }
  return checkClaims(payload);
}

function checkClaims(payload: Uint8Array): LicenceState {
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    return none('the licence payload is not JSON');
  }
  if (!Value.Check(LicenceClaims, claims)) {
    return none(`the licence claims are malformed: ${describeSchemaErrors(LicenceClaims, claims).join('; ')}`);
  }
  if (Date.parse(claims.period_end) <= Date.parse(claims.period_start)) {
    return none('the licence claims are malformed: period_end must be after period_start');
  }
  return { kind: 'loaded', licence: claims };
}

function none(reason: string): LicenceState {
  return { kind: 'none', reason };
}

/** The file's text, or the error code (`ENOENT`, `EACCES`, ...) when it cannot be read. */
async function readText(path: string): Promise<string | { code: string }> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? 'unreadable' };
  }
}
