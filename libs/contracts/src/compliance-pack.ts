import { Type, type Static } from 'typebox';

/**
 * The compliance pack file (docs/compliance.md "Pack file format"): one framework, its controls,
 * and for each control the platform evidence that backs it and whether a signed attestation is
 * needed. Modelled on the CISO Assistant library layout (`urn`, `ref_id`-like control ids,
 * `provider`, `packager`, `version`), flattened: a pack is one framework and every control is
 * assessable. Packs are YAML or JSON; `@agent-platform/compliance` parses them against this schema
 * and then checks what a schema cannot (unique ids, known evidence kinds and their parameters,
 * platform controls that exist).
 */

/** The `format` value every pack file carries, so that a later format can be told apart. */
export const COMPLIANCE_PACK_FORMAT = 'agent-platform/compliance-pack/1';

const strict = { additionalProperties: false } as const;

/** Pack and control ids: they appear in URLs and file names (`compliance-report-<id>.pdf`). */
export const PACK_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';
export const CONTROL_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

const Text = (description: string, maxLength = 2000) => Type.String({ minLength: 1, maxLength, description });

/**
 * One evidence check: a `kind` from the closed catalogue of docs/compliance.md "Evidence kinds"
 * and that kind's parameters beside it (`{kind: audit_retention, min_days: 183}`). The
 * parameters are checked per kind when the pack is loaded.
 */
export const PackEvidenceCheck = Type.Object(
  {
    kind: Type.String({
      minLength: 1,
      description: 'An evidence kind (docs/compliance.md "Evidence kinds").',
    }),
  },
  { additionalProperties: true, description: 'An evidence check: its kind and the parameters of that kind.' },
);
export type PackEvidenceCheck = Static<typeof PackEvidenceCheck>;

export const PackControl = Type.Object(
  {
    id: Type.String({ pattern: CONTROL_ID_PATTERN, description: 'Unique within the pack, e.g. NAIC-01.' }),
    requirement: Text("The requirement, paraphrased (never presented as the regulation's own text)."),
    source: Type.Optional(Text('Where the requirement comes from: article, section, paragraph.', 300)),
    unconfirmed: Type.Optional(
      Text('What about this control could not be confirmed against the primary text.', 500),
    ),
    platform_controls: Type.Optional(
      Type.Array(Type.String({ pattern: CONTROL_ID_PATTERN }), {
        maxItems: 32,
        description: 'Ids of controls of the built-in platform-controls pack whose evidence backs this one.',
      }),
    ),
    evidence: Type.Optional(
      Type.Array(PackEvidenceCheck, { maxItems: 32, description: "Checks of this control's own." }),
    ),
    attestation: Type.Optional(
      Type.Union([Type.Literal('required'), Type.Literal('none')], {
        description:
          '`required`: the control has a manual part; it stays Unknown until a valid signed attestation exists.',
      }),
    ),
    attestation_guidance: Type.Optional(
      Text('What the attesting document must show (the manual part).', 1000),
    ),
  },
  strict,
);
export type PackControl = Static<typeof PackControl>;

export const CompliancePackFile = Type.Object(
  {
    format: Type.Literal(COMPLIANCE_PACK_FORMAT),
    id: Type.String({ pattern: PACK_ID_PATTERN, description: 'Pack id (framework_id in reports).' }),
    urn: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 300,
        description: 'A URN naming the framework, as CISO Assistant libraries carry.',
      }),
    ),
    name: Text('Framework name.', 300),
    version: Text('Framework version (a date or an edition).', 100),
    jurisdiction: Text('Where it applies.', 300),
    provider: Type.Optional(Text('Who issued the framework.', 200)),
    packager: Type.Optional(Text('Who wrote this pack.', 200)),
    description: Type.Optional(Text('What the framework is.', 4000)),
    disclaimer: Type.Optional(
      Text('Printed on every report of this pack, e.g. that requirements are paraphrased.', 2000),
    ),
    controls: Type.Array(PackControl, { minItems: 1, maxItems: 500 }),
  },
  strict,
);
export type CompliancePackFile = Static<typeof CompliancePackFile>;
