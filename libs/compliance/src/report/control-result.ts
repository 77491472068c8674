import type {
  AttestationView,
  ComplianceControl,
  ControlStatus,
  EvidenceResult,
} from '@agent-platform/contracts';
import type { LoadedControl } from '../packs/pack-model.ts';

/**
 * How a control's status is decided (docs/compliance.md "How a status is decided"):
 * 1. any evidence check Unsatisfied: Unsatisfied (the platform contradicts the control);
 * 2. else, a manual part without a valid attestation: Unknown;
 * 3. else, any check Unknown (no evidence either way, e.g. audit disabled): Unknown;
 * 4. else Satisfied.
 */
export function controlStatus(
  evidence: readonly EvidenceResult[],
  attestationRequired: boolean,
  attested: boolean,
): ControlStatus {
  if (evidence.some((e) => e.status === 'Unsatisfied')) return 'Unsatisfied';
  if (attestationRequired && !attested) return 'Unknown';
  if (evidence.some((e) => e.status === 'Unknown')) return 'Unknown';
  return 'Satisfied';
}

/**
 * The attestation a report shows: the valid one that runs longest; else the newest of any state
 * (so the reader sees who attested and why it no longer counts); null when none was made.
 */
export function shownAttestation(attestations: readonly AttestationView[]): AttestationView | null {
  const valid = attestations.filter((a) => a.state === 'valid');
  const pick = (list: readonly AttestationView[], key: 'expires_at' | 'attested_at') =>
    [...list].sort((a, b) => (a[key] === b[key] ? (a.id < b.id ? 1 : -1) : a[key] < b[key] ? 1 : -1))[0] ??
    null;
  return valid.length > 0 ? pick(valid, 'expires_at') : pick(attestations, 'attested_at');
}

function attestationSentence(control: LoadedControl, attestation: AttestationView | null): string {
  if (control.attestation !== 'required') return '';
  const guidance =
    control.attestation_guidance === undefined ? '' : ` (${control.attestation_guidance.replace(/\.$/, '')})`;
  if (attestation === null) return `Manual part: no attestation yet${guidance}.`;
  const who = `${attestation.identity} (${attestation.role})`;
  const doc = `document sha256 ${attestation.document_sha256}`;
  switch (attestation.state) {
    case 'valid':
      return `Manual part attested by ${who} on ${attestation.attested_at}, valid until ${attestation.expires_at}: ${doc}.`;
    case 'expired':
      return `Manual part: the attestation by ${who} expired on ${attestation.expires_at}${guidance}.`;
    case 'revoked':
      return `Manual part: the attestation by ${who} was revoked on ${attestation.revoked_at ?? ''} by ${attestation.revoked_by ?? ''}.`;
    case 'not_yet_valid':
      return `Manual part: the attestation by ${who} is dated ${attestation.attested_at}, after this report.`;
    case 'invalid_signature':
      return `Manual part: the attestation by ${who} does not verify with the platform key (altered, or signed by another key); it does not count.`;
  }
}

/** One control of the report: its evidence, the attestation, and the status they give. */
export function controlResult(input: {
  control: LoadedControl;
  platformControls: string[];
  evidence: EvidenceResult[];
  attestations: readonly AttestationView[];
  generatedAt: string;
}): ComplianceControl {
  const { control, evidence } = input;
  const attestation = control.attestation === 'required' ? shownAttestation(input.attestations) : null;
  const attested = attestation?.state === 'valid';
  const status = controlStatus(evidence, control.attestation === 'required', attested);
  const sentences = evidence.map((e) => `${e.platform_control ?? e.kind}: ${e.summary}`);
  const manual = attestationSentence(control, attestation);
  if (manual !== '') sentences.push(manual);
  // Evaluated when a check ran now; a manual-only control when its valid attestation was made.
  const evaluatedAt =
    evidence.length > 0
      ? input.generatedAt
      : attestation !== null && attested
        ? attestation.attested_at
        : null;
  return {
    control_id: control.id,
    requirement: control.requirement,
    platform_controls: input.platformControls,
    status,
    evidence_description: sentences.join(' '),
    evaluated_at: evaluatedAt,
    source: control.source ?? null,
    unconfirmed: control.unconfirmed ?? null,
    attestation_required: control.attestation === 'required',
    attestation_guidance: control.attestation_guidance ?? null,
    evidence,
    attestation,
  };
}
