import type {
  AttestationView,
  ComplianceControl,
  ComplianceReport,
  EvidenceResult,
} from '@agent-platform/contracts';
import { canonicalJson, sha256Hex } from '@agent-platform/domain';
import { integrityAnchor, oldestEntry, scanAudit } from '../evidence/audit-scan.ts';
import { createEvidenceFacts } from '../evidence/evidence-facts.ts';
import type { PlannedCheck } from '../evidence/evidence-kind.ts';
import { evidenceKindOf } from '../evidence/evidence-kinds.ts';
import type { EvidenceSource } from '../evidence/evidence-source.ts';
import {
  PLATFORM_CONTROLS_PACK,
  type LoadedControl,
  type LoadedPack,
  type PackCheck,
} from '../packs/pack-model.ts';
import { controlResult } from './control-result.ts';

/** Printed on every report (docs/compliance.md "What a report is and is not"). */
export const REPORT_DISCLAIMER =
  'Evidence, not certification: this report shows what the platform recorded and how it is configured. ' +
  'Requirements are paraphrased from the framework; they are not its text, and items marked unconfirmed could not be checked against the primary source. ' +
  'A control that operated is not proof that it was effective. This is not legal advice.';

export interface BuildReportInput {
  pack: LoadedPack;
  platformControls: ReadonlyMap<string, LoadedControl>;
  source: EvidenceSource;
  /** Every attestation of this pack, with its state at `now`. */
  attestations: readonly AttestationView[];
  now: Date;
  platformVersion: string;
}

interface Planned {
  platformControl: string | null;
  check: PackCheck;
  planned: PlannedCheck;
}

function plan(check: PackCheck, platformControl: string | null, now: Date): Planned {
  const kind = evidenceKindOf(check.kind);
  // Packs are checked at load, so an unknown kind here is a bug, not bad input.
  if (kind === undefined) throw new Error(`evidence kind '${check.kind}' is not in the catalogue`);
  return { platformControl, check, planned: kind.plan(check.params, now) };
}

/**
 * Evaluates every control of a pack against the platform as it is now (docs/compliance.md "How a
 * status is decided") and assembles the spec's Report plus its integrity anchor. The output
 * depends only on the store, the config, the licence, the checkpoint sink and `now`: ids are not
 * random, lists are in pack order, and the same state gives the same report, byte for byte.
 *
 * Cost: one full walk of the audit chain (the anchor) and one scan of the entries the checks
 * read, in batches; the other reads are a few indexed queries.
 */
export async function buildReport(input: BuildReportInput): Promise<ComplianceReport> {
  const { pack, source, now } = input;
  const generatedAt = now.toISOString();
  const verified = await source.verifyAudit();
  const integrity = integrityAnchor(verified);
  const archive = verified.valid === null ? null : (verified.archive ?? null);
  const log = source.auditLog();
  const oldest = source.auditEnabled ? await oldestEntry(log) : null;
  const facts = createEvidenceFacts(source, { now, integrity, archive, oldestEntry: oldest });

  // A platform control's checks run once per report, however many controls reference it.
  const byPlatformControl = new Map<string, Planned[]>();
  const plans = pack.controls.map((control) => {
    const isPlatform = pack.meta.id === PLATFORM_CONTROLS_PACK;
    const refs = isPlatform ? [control.id] : control.platform_controls;
    const shared = refs.flatMap((ref) => {
      let planned = byPlatformControl.get(ref);
      if (planned === undefined) {
        const definition = isPlatform ? control : input.platformControls.get(ref);
        planned = (definition?.evidence ?? []).map((check) => plan(check, ref, now));
        byPlatformControl.set(ref, planned);
      }
      return planned;
    });
    const own = isPlatform ? [] : control.evidence.map((check) => plan(check, null, now));
    return { control, refs, checks: [...shared, ...own] };
  });

  const everyCheck = [...new Set(plans.flatMap((p) => p.checks))];
  // Entries appended while the report is built stay out of it: the scan ends where the verify walk did.
  const lastSeq = oldest === null ? 0 : oldest.seq + integrity.entry_count - 1;
  await scanAudit(
    log,
    lastSeq,
    everyCheck.flatMap((c) => c.planned.taps),
  );
  const outcomes = new Map<Planned, EvidenceResult>();
  for (const check of everyCheck) {
    const outcome = await check.planned.evaluate(facts);
    outcomes.set(check, { platform_control: check.platformControl, kind: check.check.kind, ...outcome });
  }

  const controls: ComplianceControl[] = plans.map(({ control, refs, checks }) =>
    controlResult({
      control,
      platformControls: refs,
      evidence: checks.map((c) => outcomes.get(c)!),
      attestations: input.attestations.filter((a) => a.control_id === control.id),
      generatedAt,
    }),
  );
  const count = (status: ComplianceControl['status']) => controls.filter((c) => c.status === status).length;
  const licence = facts.licence;
  const report: Omit<ComplianceReport, 'report_sha256'> = {
    framework_id: pack.meta.id,
    framework_name: pack.meta.name,
    framework_version: pack.meta.version,
    jurisdiction: pack.meta.jurisdiction,
    generated_at: generatedAt,
    controls,
    satisfied_count: count('Satisfied'),
    unsatisfied_count: count('Unsatisfied'),
    unknown_count: count('Unknown'),
    pack_origin: pack.origin,
    framework_provider: pack.meta.provider ?? null,
    disclaimer:
      pack.meta.disclaimer === undefined ? REPORT_DISCLAIMER : `${pack.meta.disclaimer} ${REPORT_DISCLAIMER}`,
    platform_version: input.platformVersion,
    carrier:
      licence.kind === 'loaded'
        ? { carrier_name: licence.licence.carrier_name, carrier_id: licence.licence.carrier_id }
        : null,
    integrity,
  };
  return { ...report, report_sha256: sha256Hex(canonicalJson(report)) };
}
