import { Type, type Static } from 'typebox';
import { CONTROL_ID_PATTERN, PACK_ID_PATTERN } from '../compliance-pack.ts';

/**
 * HTTP bodies of spec §Endpoints "Compliance" (pack summary, report, control) plus the signed
 * attestations of manual controls (ours; docs/compliance.md "Attestations"). Every field of the
 * spec's shapes is kept as the spec names it; the other fields are additive and documented.
 */

const Timestamp = Type.String({ description: 'ISO 8601 UTC.' });
const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const ControlStatus = Type.Union([
  Type.Literal('Satisfied'),
  Type.Literal('Unsatisfied'),
  Type.Literal('Unknown'),
]);
export type ControlStatus = Static<typeof ControlStatus>;

/** Spec "Pack summary", plus where the pack came from. */
export const PackSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  jurisdiction: Type.String(),
  control_count: Type.Integer({ minimum: 0 }),
  origin: Type.Union([Type.Literal('built-in'), Type.Literal('carrier')], {
    description: 'built-in: shipped with the platform; carrier: a file of [compliance] packs_dir.',
  }),
});
export type PackSummary = Static<typeof PackSummary>;

/** A carrier pack file that was refused at load (boot or POST /config/reload), and why. */
export const PackLoadFailure = Type.Object({
  file: Type.String({ description: 'The file name in [compliance] packs_dir.' }),
  errors: Type.Array(Type.String(), { description: 'Each names the field (and the control) at fault.' }),
});
export type PackLoadFailure = Static<typeof PackLoadFailure>;

export const PackList = Type.Object({
  packs: Type.Array(PackSummary),
  failed_packs: Type.Array(PackLoadFailure, {
    description: 'Carrier pack files refused at load; [] when none.',
  }),
});
export type PackList = Static<typeof PackList>;

export const ReportFormatQuery = Type.Object({
  format: Type.Union([Type.Literal('json'), Type.Literal('pdf')], {
    default: 'json',
    description: 'json (default) or pdf.',
  }),
});
export type ReportFormatQuery = Static<typeof ReportFormatQuery>;

export const PackIdParams = Type.Object({
  id: Type.String({ description: 'Pack id, as GET /compliance/packs lists it.' }),
});
export type PackIdParams = Static<typeof PackIdParams>;

/** Where a piece of evidence can be found: an audit seq range, a config key, a package... */
export const EvidencePointer = Type.Object({
  type: Type.String({
    description:
      'audit_seq, config, package, api_key, licence, vault_key, workflow_run, checkpoint, attestation.',
  }),
  ref: Type.String({ description: 'The seq range (`12-40`), key, name or id.' }),
  detail: Type.Optional(Type.String()),
});
export type EvidencePointer = Static<typeof EvidencePointer>;

/** The result of one evidence check, evaluated fresh for the report. */
export const EvidenceResult = Type.Object({
  platform_control: NullableString(
    "The platform control the check belongs to; null for a check of the control's own.",
  ),
  kind: Type.String(),
  status: ControlStatus,
  summary: Type.String({ description: 'What was found, in a sentence.' }),
  pointers: Type.Array(EvidencePointer),
});
export type EvidenceResult = Static<typeof EvidenceResult>;

export const AttestationState = Type.Union(
  [
    Type.Literal('valid'),
    Type.Literal('expired'),
    Type.Literal('revoked'),
    Type.Literal('not_yet_valid'),
    Type.Literal('invalid_signature'),
  ],
  { description: 'Only `valid` moves a control off Unknown.' },
);
export type AttestationState = Static<typeof AttestationState>;

/** A signed attestation of a manual control (docs/compliance.md "Attestations"). */
export const AttestationView = Type.Object({
  id: Type.String(),
  pack_id: Type.String(),
  control_id: Type.String(),
  document_sha256: Type.String({ description: 'Lowercase hex sha256 of the attesting document.' }),
  statement: Type.String(),
  attested_at: Timestamp,
  expires_at: Timestamp,
  identity: Type.String({ description: 'The authenticated caller who attested.' }),
  role: Type.String(),
  external: Type.Union([Type.Object({ issuer: Type.String(), subject: Type.String() }), Type.Null()], {
    description:
      "For a caller signed in with an identity provider (auth mode oidc): the token's issuer and subject; null for an API key.",
  }),
  signature: Type.Object({
    algorithm: Type.Literal('Ed25519'),
    key_id: Type.String(),
    value: Type.String({
      description: 'base64url Ed25519 signature of the canonical JSON of the statement fields.',
    }),
  }),
  revoked_at: NullableString('When it was revoked; null while not.'),
  revoked_by: NullableString('Who revoked it.'),
  state: AttestationState,
});
export type AttestationView = Static<typeof AttestationView>;

export const AttestationBody = Type.Object(
  {
    pack_id: Type.String({ pattern: PACK_ID_PATTERN }),
    control_id: Type.String({ pattern: CONTROL_ID_PATTERN }),
    document_sha256: Type.String({
      pattern: '^(sha256:)?[0-9a-fA-F]{64}$',
      description: 'sha256 of the document (hex, optional `sha256:` prefix).',
    }),
    statement: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'What the attester states, in their words.',
    }),
    expires_at: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'ISO 8601: after this the control is Unknown again. Give this or expires_in.',
      }),
    ),
    expires_in: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A duration from now (`365d`, `52w`), as for API keys. Give this or expires_at.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AttestationBody = Static<typeof AttestationBody>;

export const AttestationQuery = Type.Object({
  pack_id: Type.Optional(Type.String()),
  control_id: Type.Optional(Type.String()),
});
export type AttestationQuery = Static<typeof AttestationQuery>;

export const AttestationIdParams = Type.Object({ id: Type.String() });
export type AttestationIdParams = Static<typeof AttestationIdParams>;

export const AttestationList = Type.Object({
  key_id: Type.String({ description: "The key that signs attestations (the platform's checkpoint key)." }),
  public_key: Type.String({ description: '`ed25519:<base64url>` of that key.' }),
  attestations: Type.Array(AttestationView),
});
export type AttestationList = Static<typeof AttestationList>;

/** Spec "Control", plus the evidence behind the status and the attestation of a manual part. */
export const ComplianceControl = Type.Object({
  control_id: Type.String(),
  requirement: Type.String(),
  platform_controls: Type.Array(Type.String()),
  status: ControlStatus,
  evidence_description: Type.String(),
  evaluated_at: Type.Union([Timestamp, Type.Null()], {
    description: 'Null when never evaluated (a manual control without a valid attestation).',
  }),
  source: NullableString('Citation of the requirement.'),
  unconfirmed: NullableString(
    'What could not be confirmed against the primary text; null when nothing is marked.',
  ),
  attestation_required: Type.Boolean(),
  attestation_guidance: NullableString('What an attesting document must show.'),
  evidence: Type.Array(EvidenceResult),
  attestation: Type.Union([AttestationView, Type.Null()], {
    description:
      'The valid attestation expiring last, else the newest one with its state; null when none was made.',
  }),
});
export type ComplianceControl = Static<typeof ComplianceControl>;

/** The audit chain's verify result at generation time: the report's integrity anchor. */
export const IntegrityAnchor = Type.Object({
  valid: Type.Union([Type.Boolean(), Type.Null()], { description: 'Null when audit is disabled.' }),
  entry_count: Type.Integer({ minimum: 0 }),
  chain_anchor: NullableString('Null when audit is disabled.'),
  tip_hash: NullableString('Hash of the newest entry; null for an empty or disabled trail.'),
  algorithm: NullableString('sha256; null when audit is disabled.'),
  walk: Type.Literal('full', { description: 'Every entry was re-hashed for the report.' }),
  first_invalid_seq: Type.Union([Type.Integer(), Type.Null()]),
  reason: NullableString('Why valid is not true.'),
  checkpoint_status: Type.Union([
    Type.Literal('not_configured'),
    Type.Literal('none_written'),
    Type.Literal('verified'),
    Type.Literal('failed'),
    Type.Literal('disabled'),
  ]),
  checkpoint: Type.Union([
    Type.Object({
      at: Timestamp,
      entry_count: Type.Integer({ minimum: 0 }),
      tip_seq: Type.Integer({ minimum: 0 }),
      tip_hash: NullableString('Hash of entry tip_seq.'),
      key_id: Type.String(),
      sink: Type.String(),
      signature_valid: Type.Boolean(),
    }),
    Type.Null(),
  ]),
});
export type IntegrityAnchor = Static<typeof IntegrityAnchor>;

/** Spec "Report", plus the integrity anchor, the carrier and a hash of the whole report. */
export const ComplianceReport = Type.Object({
  framework_id: Type.String(),
  framework_name: Type.String(),
  framework_version: Type.String(),
  jurisdiction: Type.String(),
  generated_at: Timestamp,
  controls: Type.Array(ComplianceControl),
  satisfied_count: Type.Integer({ minimum: 0 }),
  unsatisfied_count: Type.Integer({ minimum: 0 }),
  unknown_count: Type.Integer({ minimum: 0 }),
  pack_origin: Type.Union([Type.Literal('built-in'), Type.Literal('carrier')]),
  framework_provider: NullableString('Who issued the framework.'),
  disclaimer: Type.String(),
  platform_version: Type.String(),
  carrier: Type.Union(
    [Type.Object({ carrier_name: Type.String(), carrier_id: Type.String() }), Type.Null()],
    {
      description: 'From the loaded licence; null without one.',
    },
  ),
  integrity: IntegrityAnchor,
  report_sha256: Type.String({
    description: 'sha256 (hex) of the canonical JSON of this report without this field.',
  }),
});
export type ComplianceReport = Static<typeof ComplianceReport>;
