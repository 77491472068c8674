import type { ComplianceReport, PackList } from '@agent-platform/contracts';
import { Errors, type Clock } from '@agent-platform/domain';
import type { AttestationService } from './attestations/attestation-service.ts';
import type { EvidenceSource } from './evidence/evidence-source.ts';
import type { PackRegistry } from './packs/pack-registry.ts';
import { buildReport } from './report/build-report.ts';

/** GET /compliance/packs and the reports (spec §Compliance); attestations are their own service. */
export interface ComplianceService {
  packs(): PackList;
  /** NotFound for a pack that is not loaded. */
  report(packId: string): Promise<ComplianceReport>;
}

export interface ComplianceServiceDeps {
  packs: PackRegistry;
  evidence: EvidenceSource;
  attestations: Pick<AttestationService, 'list'>;
  clock: Clock;
  platformVersion: string;
}

export function createComplianceService(deps: ComplianceServiceDeps): ComplianceService {
  return {
    packs: () => ({ packs: deps.packs.summaries(), failed_packs: [...deps.packs.current().failed] }),
    async report(packId) {
      const pack = deps.packs.get(packId);
      if (pack === undefined) throw Errors.notFound('compliance pack', packId);
      // One clock reading for the whole report: every "now" in it is the same instant.
      const now = deps.clock.now();
      return buildReport({
        pack,
        platformControls: deps.packs.current().platformControls,
        source: deps.evidence,
        attestations: await deps.attestations.list({ pack_id: packId }, now),
        now,
        platformVersion: deps.platformVersion,
      });
    },
  };
}
