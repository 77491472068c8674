import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { PlatformConfig } from '@agent-platform/contracts';
import {
  checkFleetAgreement,
  FLEET_ADOPT_ENV,
  FLEET_DISAGREEMENT_HEADING,
  FleetDisagreementError,
  fleetRecord,
  licenceFingerprint,
  parseFleetAdopt,
  vaultKeyFingerprint,
  type FleetClaim,
  type FleetItem,
  type LicenceState,
} from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { ConfigError } from './config-error.ts';

export interface FleetBootCheckOptions {
  store: Store;
  /** The process's environment: `AP_FLEET_ADOPT` is read from it. */
  env: Record<string, string | undefined>;
  /** `api`, `agent-worker`, `platform`...: recorded as `<process>@<host>:<pid>`. */
  processName: string;
  now: () => Date;
  log: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
}

/**
 * The boot check of docs/scale-out.md: every claim is compared with the fleet's record in the
 * store (the first node records it). Resolves when this node agrees on every one; otherwise
 * throws a `ConfigError` listing each item that differs (both fingerprints, never a secret) and
 * the config key or environment variable that fixes it, so the process exits before it serves.
 * A null in `claims` is a licence this process reads but holds none of (`licenceClaim`): it is
 * not refused, but warned about when the fleet has one.
 */
export async function agreeWithFleetAtBoot(claims: ReadonlyArray<FleetClaim | null>, options: FleetBootCheckOptions): Promise<void> {
  let adopt: Set<FleetItem>;
  try {
    adopt = parseFleetAdopt(options.env[FLEET_ADOPT_ENV]);
  } catch (error) {
    throw new ConfigError([(error as Error).message]);
  }
  const present = claims.filter((c): c is FleetClaim => c !== null);
  const node = `${options.processName}@${hostname()}:${process.pid}`;
  try {
    for (const agreement of await checkFleetAgreement(options.store, present, { node, now: options.now, adopt })) {
      const fields = { item: agreement.item, fingerprint: agreement.fleet.fingerprint };
      if (agreement.outcome === 'recorded') options.log.info(fields, `fleet agreement: ${agreement.item} recorded by this node (the first to boot)`);
      if (agreement.outcome === 'renewed') options.log.info({ ...fields, replaced: agreement.replaced }, 'fleet agreement: a newer licence replaces the fleet\'s (renewal)');
      if (agreement.outcome === 'adopted')
        options.log.warn({ ...fields, replaced: agreement.replaced }, `fleet agreement: ${agreement.item} replaced by this node's (${FLEET_ADOPT_ENV}); nodes holding the old one refuse to start until given this one`);
    }
  } catch (error) {
    if (error instanceof FleetDisagreementError) throw new ConfigError(error.problems, { heading: FLEET_DISAGREEMENT_HEADING });
    throw error;
  }
  // A null claim is a licence this process reads but does not hold (`licenceClaim`): it refuses
  // every invocation anyway; say that the fleet runs on one.
  if (claims.some((c) => c === null)) {
    const fleet = await fleetRecord(options.store, 'licence');
    if (fleet !== null) options.log.warn({ fleet_licence: fleet.fingerprint }, 'this node has no licence but the fleet has one: set [licence] file and public_key_file to the fleet\'s licence');
  }
}

/** The vault key's claim; the fix names the variable that hands a node the fleet's key. */
export function vaultKeyClaim(key: Buffer, envName: string): FleetClaim {
  return { item: 'vault_key', fingerprint: vaultKeyFingerprint(key), fix: `the environment variable ${envName} ([vault] key_env)` };
}

const SIGNING_KEY_CONFIG: Record<'audit_checkpoint_key' | 'backup_signing_key' | 'registry_signing_key', string> = {
  audit_checkpoint_key: '[audit.checkpoints] signing_key_file',
  backup_signing_key: '[backup] signing_key_file',
  registry_signing_key: '[registry] signing_key_file',
};

/** A signing key's claim by its public key id (`sha256:...`), which reveals nothing of the private key. */
export function signingKeyClaim(item: keyof typeof SIGNING_KEY_CONFIG, keyId: string): FleetClaim {
  return { item, fingerprint: keyId, fix: SIGNING_KEY_CONFIG[item] };
}

/**
 * The licence's claim (sha256 of the token and its `iat`), or null when this node holds no
 * verified licence (it refuses every invocation: nothing to agree on).
 */
export async function licenceClaim(config: PlatformConfig, state: LicenceState): Promise<FleetClaim | null> {
  if (state.kind !== 'loaded' || config.licence.file === undefined) return null;
  const token = await readFile(config.licence.file, 'utf8').catch(() => null);
  if (token === null) return null;
  return { item: 'licence', fingerprint: licenceFingerprint(token), issuedAt: state.licence.iat, fix: '[licence] file (and public_key_file)' };
}
