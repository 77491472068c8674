import type { ConfigHolder } from '@agent-platform/config';
import {
  createAttestationService,
  createComplianceService,
  createEvidenceSource,
  createPackRegistry,
  type AttestationService,
  type ComplianceService,
  type PackSet,
} from '@agent-platform/compliance';
import type {
  AuditTrail,
  CheckpointSigner,
  Clock,
  KeyService,
  LicenceState,
  Vault,
} from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';

export interface OpenComplianceDeps {
  config: ConfigHolder;
  store: Store;
  clock: Clock;
  logger: Logger;
  audit: AuditTrail;
  keys: KeyService;
  vault: Vault;
  licence: () => LicenceState;
  /** The platform's checkpoint key: it also signs attestations (one key for a regulator to keep). */
  signer: CheckpointSigner;
  version: string;
}

/** Each refused carrier pack is an error line naming the file and every fault (docs/compliance.md). */
function logFailures(logger: Logger, set: PackSet): void {
  for (const failure of set.failed) {
    logger.error(
      { file: failure.file, errors: failure.errors },
      `compliance pack ${failure.file} refused: ${failure.errors.join('; ')}`,
    );
  }
}

/**
 * The compliance packs (built-in, and `[compliance] packs_dir` read at boot and again after
 * every successful POST /config/reload), the attestations and the report service. A bad carrier
 * pack never stops the platform: it is logged and listed in GET /compliance/packs `failed_packs`.
 */
export async function openCompliance(
  deps: OpenComplianceDeps,
): Promise<{ compliance: ComplianceService; attestations: AttestationService }> {
  const packs = await createPackRegistry({ packsDir: deps.config.current().compliance.packs_dir });
  logFailures(deps.logger, packs.current());
  deps.config.onChange(async ({ config }) =>
    logFailures(deps.logger, await packs.reload(config.compliance.packs_dir)),
  );
  const attestations = createAttestationService({
    store: deps.store,
    clock: deps.clock,
    signer: deps.signer,
    audit: deps.audit,
    packs,
    maxDays: () => deps.config.current().compliance.attestation_max_days,
  });
  const evidence = createEvidenceSource({
    store: deps.store,
    audit: deps.audit,
    keys: deps.keys,
    vault: deps.vault,
    config: () => deps.config.current(),
    licence: deps.licence,
  });
  return {
    compliance: createComplianceService({
      packs,
      evidence,
      attestations,
      clock: deps.clock,
      platformVersion: deps.version,
    }),
    attestations,
  };
}
