import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Endpoints "Security, audit and vault" (GET /security/*, POST /audit/append,
 * /vault). Wire names are the spec's.
 */

/**
 * Audit categories. The spec leaves them open ("not shown"); docs/audit.md says which operations
 * produce each. `request` is the default for a mutating route that names no category.
 */
export const AUDIT_CATEGORIES = [
  'auth',
  'access',
  'keys',
  'vault',
  'config',
  'audit',
  'system',
  'agents',
  'workflows',
  'tools',
  'integrations',
  'channels',
  'request',
] as const;
export const AuditCategory = Type.Union(AUDIT_CATEGORIES.map((c) => Type.Literal(c)));
export type AuditCategory = (typeof AUDIT_CATEGORIES)[number];

export const SecurityStatus = Type.Object({
  audit_enabled: Type.Boolean(),
  audit_entries: Type.Integer({ minimum: 0 }),
  auth_mode: Type.Union([Type.Literal('none'), Type.Literal('api-key'), Type.Literal('oidc')]),
  tls_enabled: Type.Boolean(),
});
export type SecurityStatus = Static<typeof SecurityStatus>;

/**
 * GET /security/audit query. `limit` above `[audit] max_query_limit` is refused by the route (the
 * maximum is configuration, not schema); `category` and `since` are checked by the domain, which
 * also normalizes `since` to UTC for comparison.
 */
export const AuditQuerystring = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    default: 20,
    description: 'Entries returned, newest first; at most [audit] max_query_limit.',
  }),
  // A plain string checked by the domain: its 400 names every allowed value, which a schema
  // union of nine literals cannot (TypeBox caps the errors it reports per check).
  category: Type.Optional(Type.String({ description: `One of ${AUDIT_CATEGORIES.join(', ')}.` })),
  actor: Type.Optional(Type.String({ description: 'Identity that caused the entry.' })),
  since: Type.Optional(
    Type.String({ description: 'ISO 8601 inclusive lower bound on timestamp; UTC when no offset.' }),
  ),
});
export type AuditQuerystring = Static<typeof AuditQuerystring>;

export const AuditEntryView = Type.Object({
  id: Type.Integer(),
  seq: Type.Integer(),
  timestamp: Type.String(),
  category: Type.String(),
  identity: Type.String(),
  role: Type.String(),
  action: Type.String(),
  target: Type.String(),
  result: Type.String(),
  hash: Type.String({ description: '`sha256:<hex>`; see docs/audit.md for the construction.' }),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});
export type AuditEntryView = Static<typeof AuditEntryView>;

export const AuditEntryList = Type.Object({ entries: Type.Array(AuditEntryView) });
export type AuditEntryList = Static<typeof AuditEntryList>;

export const ChainVerifyReport = Type.Object({
  valid: Type.Boolean(),
  entry_count: Type.Integer({ minimum: 0 }),
  chain_anchor: Type.String(),
  tip_hash: Type.Union([Type.String(), Type.Null()]),
  algorithm: Type.Literal('sha256'),
  integrity_covers: Type.Array(Type.String()),
  integrity_excludes: Type.Array(Type.String()),
  verification_note: Type.String(),
  first_invalid_seq: Type.Optional(Type.Integer()),
  first_invalid_reason: Type.Optional(Type.String()),
  verified_from_seq: Type.Integer({ minimum: 1, description: 'First seq re-hashed by this walk: 1 for a full walk.' }),
  checked_entries: Type.Integer({ minimum: 0, description: 'Entries re-hashed by this walk.' }),
  checkpoint_status: Type.Optional(
    Type.Union([Type.Literal('not_configured'), Type.Literal('none_written'), Type.Literal('verified'), Type.Literal('failed')], {
      description: 'How the latest external checkpoint was checked ([audit.checkpoints], docs/audit.md "Checkpoints").',
    }),
  ),
  checkpoint: Type.Optional(
    Type.Union([
      Type.Object({
        entry_count: Type.Integer({ minimum: 0 }),
        tip_hash: Type.Union([Type.String(), Type.Null()]),
        tip_seq: Type.Integer({ minimum: 0 }),
        at: Type.String(),
        key_id: Type.String(),
        sink: Type.String(),
        signature_valid: Type.Boolean(),
      }),
      Type.Null(),
    ], { description: 'The latest checkpoint the chain was checked against; null when none was checked.' }),
  ),
  reason: Type.Optional(Type.String({ description: 'Why valid is false: the chain break or the checkpoint failure.' })),
});

/** GET /security/verify query: `full=true` re-hashes every entry instead of starting after the verified prefix. */
export const VerifyQuerystring = Type.Object({
  full: Type.Boolean({ default: false, description: 'Re-hash every entry, not only those after what this node verified before.' }),
});
export type VerifyQuerystring = Static<typeof VerifyQuerystring>;

export const AuditDisabledReport = Type.Object({
  valid: Type.Null(),
  status: Type.Literal('disabled'),
  reason: Type.String(),
});

/** A broken chain is `valid: false` with HTTP 200, never an error status (spec). */
export const VerifyResponse = Type.Union([ChainVerifyReport, AuditDisabledReport]);
export type VerifyResponse = Static<typeof VerifyResponse>;

/**
 * POST /audit/append. The spec leaves required fields open: `event_type` is required (an entry
 * without a type says nothing), `agent_id` and `detail` are optional. `detail` is capped at 4096
 * characters so one request cannot bloat the append-only trail. Unknown fields are refused rather
 * than silently left out of a record that can never be corrected.
 */
export const AuditAppendBody = Type.Object(
  {
    event_type: Type.String({ minLength: 1, maxLength: 128 }),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    detail: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);
export type AuditAppendBody = Static<typeof AuditAppendBody>;

export const AuditAppendResponse = Type.Object({
  status: Type.Literal('recorded'),
  event_type: Type.String(),
});
export type AuditAppendResponse = Static<typeof AuditAppendResponse>;

export const VaultEntryView = Type.Object({ key: Type.String(), stored_at: Type.String() });
export type VaultEntryView = Static<typeof VaultEntryView>;

/** GET /vault: a bare array, no wrapper object (spec). */
export const VaultEntryList = Type.Array(VaultEntryView);

export const VaultKeyParams = Type.Object({
  key: Type.String({ description: '1-128 characters of A-Z a-z 0-9 . _ -' }),
});
export type VaultKeyParams = Static<typeof VaultKeyParams>;

export const VaultPutBody = Type.Object(
  { value: Type.String({ minLength: 1, description: 'The secret; write-only, never returned.' }) },
  { additionalProperties: false },
);
export type VaultPutBody = Static<typeof VaultPutBody>;

export const AuditCheckpointBody = Type.Object({
  entry_count: Type.Integer({ minimum: 0 }),
  tip_hash: Type.Union([Type.String(), Type.Null()]),
  tip_seq: Type.Integer({ minimum: 0 }),
  at: Type.String(),
  key_id: Type.String(),
  supersedes: Type.Optional(
    Type.Object(
      {
        name: Type.Union([Type.String(), Type.Null()]),
        entry_count: Type.Union([Type.Integer(), Type.Null()]),
        tip_hash: Type.Union([Type.String(), Type.Null()]),
        failure: Type.String({ description: 'Why the chain no longer reached the replaced checkpoint.' }),
        reason: Type.String({ description: "The operator's reason for writing over it." }),
      },
      { description: 'Only on a checkpoint written over one the chain no longer reaches (POST with supersede_reason).' },
    ),
  ),
});

/** One signed checkpoint (docs/audit.md "Checkpoints"): the file the sink holds, plus where. */
export const AuditCheckpointView = Type.Object({
  checkpoint: AuditCheckpointBody,
  algorithm: Type.Literal('Ed25519'),
  signature: Type.String({ description: 'base64url Ed25519 signature of the canonical JSON of checkpoint.' }),
  name: Type.String({ description: 'Object name in the sink.' }),
  sink: Type.String(),
});
export type AuditCheckpointView = Static<typeof AuditCheckpointView>;

/** POST /security/checkpoints: no body, or a reason to write over a checkpoint the chain no longer reaches. */
export const AuditCheckpointWriteBody = Type.Object(
  {
    supersede_reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description:
          'Write even though the chain no longer reaches the latest checkpoint (409 otherwise), recording this reason and the replaced checkpoint in the signed statement.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AuditCheckpointWriteBody = Static<typeof AuditCheckpointWriteBody>;

/** GET /security/checkpoints. */
export const AuditCheckpointList = Type.Object({
  enabled: Type.Boolean({ description: 'False while [audit.checkpoints] sink is empty.' }),
  key_id: Type.String(),
  public_key: Type.String({ description: '`ed25519:<base64url>`: what the offline verifier (`platform audit verify-segment`) takes.' }),
  checkpoints: Type.Array(AuditCheckpointView),
});
export type AuditCheckpointList = Static<typeof AuditCheckpointList>;

export const AuditCheckpointQuerystring = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
});
export type AuditCheckpointQuerystring = Static<typeof AuditCheckpointQuerystring>;
