import { randomUUID } from 'node:crypto';
import type { AttestationBody, AttestationView } from '@agent-platform/contracts';
import {
  Errors,
  parseDuration,
  type AuditTrail,
  type Caller,
  type CheckpointSigner,
  type Clock,
} from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import type { PackRegistry } from '../packs/pack-registry.ts';
import {
  attestationSignatureValid,
  attestationState,
  signAttestation,
  type AttestationRecord,
} from './attestation-signature.ts';

export const ATTESTATIONS_COLLECTION = 'compliance_attestations';

type StoredAttestation = AttestationRecord;

/**
 * Signed attestations of manual controls (docs/compliance.md "Attestations"): an admin or an
 * auditor states that a document (by its sha256) shows a control is met, until a date. The
 * platform signs the statement with its own Ed25519 key, recording the authenticated identity,
 * and writes it to the audit trail; any api node of a fleet reads the same records.
 */
export interface AttestationService {
  readonly keyId: string;
  readonly publicKey: string;
  create(body: AttestationBody, caller: Caller): Promise<AttestationView>;
  /** Oldest first; `state` computed now. */
  list(filter?: { pack_id?: string; control_id?: string }, now?: Date): Promise<AttestationView[]>;
  /** Idempotent: revoking a revoked attestation answers it as it is. NotFound for an unknown id. */
  revoke(id: string, caller: Caller): Promise<AttestationView>;
}

export interface AttestationServiceDeps {
  store: Store;
  clock: Clock;
  /** The platform's checkpoint key (docs/audit.md "Checkpoints"): one key a regulator keeps. */
  signer: CheckpointSigner;
  audit: Pick<AuditTrail, 'record'>;
  packs: Pick<PackRegistry, 'get'>;
  /** `[compliance] attestation_max_days`, read per call (reloadable). */
  maxDays: () => number;
}

const DAY_MS = 86_400_000;

/** `expires_at` (an instant) or `expires_in` (a duration from now): exactly one. */
function parseExpiry(
  body: Pick<AttestationBody, 'expires_at' | 'expires_in'>,
  now: Date,
  maxDays: number,
): string {
  if ((body.expires_at === undefined) === (body.expires_in === undefined)) {
    throw Errors.validation(
      "give exactly one of 'expires_at' (an ISO 8601 date) and 'expires_in' (a duration such as 365d)",
      { field: 'expires_at' },
    );
  }
  let ms: number;
  if (body.expires_in !== undefined) ms = now.getTime() + parseDuration(body.expires_in);
  else {
    const value = body.expires_at!.trim();
    ms = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(value)
      ? Date.parse(value.replace(' ', 'T'))
      : Number.NaN;
    if (Number.isNaN(ms))
      throw Errors.validation(
        `field 'expires_at' must be an ISO 8601 date or date-time (got '${value.slice(0, 40)}')`,
        { field: 'expires_at' },
      );
  }
  if (ms <= now.getTime())
    throw Errors.validation(`field 'expires_at' must be in the future (now is ${now.toISOString()})`, {
      field: 'expires_at',
    });
  if (ms > now.getTime() + maxDays * DAY_MS) {
    throw Errors.validation(
      `the expiry is more than ${maxDays} days ahead ([compliance] attestation_max_days): attestations must be renewed`,
      {
        field: 'expires_at',
        maximum_days: maxDays,
      },
    );
  }
  return new Date(ms).toISOString();
}

export function createAttestationService(deps: AttestationServiceDeps): AttestationService {
  const records = deps.store.collection<StoredAttestation>(ATTESTATIONS_COLLECTION, {
    indexes: [{ field: 'pack_id' }, { field: 'control_id' }],
  });
  const view = (record: StoredAttestation, now: Date): AttestationView => ({
    ...record,
    state: attestationState(record, now, attestationSignatureValid(record, deps.signer)),
  });

  function target(body: AttestationBody): void {
    const pack = deps.packs.get(body.pack_id);
    if (pack === undefined) throw Errors.notFound('compliance pack', body.pack_id);
    const control = pack.controls.find((c) => c.id === body.control_id);
    if (control === undefined)
      throw Errors.validation(`pack ${body.pack_id} has no control '${body.control_id}'`, {
        field: 'control_id',
      });
    if (control.attestation !== 'required') {
      throw Errors.validation(
        `control ${body.control_id} of pack ${body.pack_id} is checked from platform evidence alone; it takes no attestation`,
        { field: 'control_id' },
      );
    }
  }

  async function audit(
    action: string,
    record: StoredAttestation,
    caller: Caller,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await deps.audit.record({
      category: 'compliance',
      identity: caller.identity,
      role: caller.role,
      action,
      target: `${record.pack_id}/${record.control_id}`,
      result: 'recorded',
      metadata: {
        attestation_id: record.id,
        document_sha256: record.document_sha256,
        attested_at: record.attested_at,
        expires_at: record.expires_at,
        key_id: record.signature.key_id,
        signature: record.signature.value,
        ...extra,
      },
    });
  }

  return {
    keyId: deps.signer.keyId,
    publicKey: deps.signer.publicKey,

    async create(body, caller) {
      target(body);
      const now = deps.clock.now();
      const record = signAttestation(
        {
          id: randomUUID(),
          pack_id: body.pack_id,
          control_id: body.control_id,
          document_sha256: body.document_sha256.replace(/^sha256:/, '').toLowerCase(),
          statement: body.statement,
          attested_at: now.toISOString(),
          expires_at: parseExpiry(body, now, deps.maxDays()),
          identity: caller.identity,
          role: caller.role,
          external:
            caller.external === undefined
              ? null
              : { issuer: caller.external.issuer, subject: caller.external.subject },
          revoked_at: null,
          revoked_by: null,
        },
        deps.signer,
      );
      await records.insert(record);
      try {
        await audit('compliance.attestation.created', record, caller);
      } catch (error) {
        // An attestation the trail does not show would be one nobody can check: undo it.
        await records.delete(record.id).catch(() => undefined);
        throw error;
      }
      return view(record, now);
    },

    async list(filter = {}, now = deps.clock.now()) {
      const where: { pack_id?: string; control_id?: string } = {};
      if (filter.pack_id !== undefined) where.pack_id = filter.pack_id;
      if (filter.control_id !== undefined) where.control_id = filter.control_id;
      const found = await records.find({ where, orderBy: { field: 'attested_at', direction: 'asc' } });
      return found.map((v) => view(v.doc, now));
    },

    async revoke(id, caller) {
      const now = deps.clock.now();
      let revokedNow = false;
      const updated = await records.update(id, (current) => {
        revokedNow = false;
        if (current === null || current.doc.revoked_at !== null) return null;
        revokedNow = true;
        return { ...current.doc, revoked_at: now.toISOString(), revoked_by: caller.identity };
      });
      if (updated === null) throw Errors.notFound('attestation', id);
      if (revokedNow)
        await audit('compliance.attestation.revoked', updated.doc, caller, {
          revoked_at: updated.doc.revoked_at,
        });
      return view(updated.doc, now);
    },
  };
}
