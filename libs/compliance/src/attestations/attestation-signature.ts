import { createPublicKey, verify } from 'node:crypto';
import type { AttestationState, AttestationView } from '@agent-platform/contracts';
import { canonicalJson, type CheckpointSigner } from '@agent-platform/domain';

/** The `format` of the signed statement: a later change of the signed fields gets a new one. */
export const ATTESTATION_FORMAT = 'agent-platform/attestation/1';

/** An attestation as stored (collection `compliance_attestations`, id = a UUID). */
export type AttestationRecord = Omit<AttestationView, 'state'>;

/** The fields the signature covers: everything but the signature value and the revocation. */
export function attestationStatement(record: AttestationRecord): Record<string, unknown> {
  return {
    format: ATTESTATION_FORMAT,
    id: record.id,
    pack_id: record.pack_id,
    control_id: record.control_id,
    document_sha256: record.document_sha256,
    statement: record.statement,
    attested_at: record.attested_at,
    expires_at: record.expires_at,
    identity: record.identity,
    role: record.role,
    external: record.external,
    key_id: record.signature.key_id,
  };
}

/**
 * The bytes signed: the canonical JSON (keys sorted at every depth, no whitespace, the audit
 * trail's `canonicalJson`) of the statement. Anyone can rebuild them from the record and check the
 * detached Ed25519 signature with the platform's public key (docs/compliance.md "Checking an
 * attestation without the platform").
 */
export function attestationBytes(record: AttestationRecord): Buffer {
  return Buffer.from(canonicalJson(attestationStatement(record)), 'utf8');
}

export function signAttestation(
  unsigned: Omit<AttestationRecord, 'signature'>,
  signer: CheckpointSigner,
): AttestationRecord {
  const pending: AttestationRecord = {
    ...unsigned,
    signature: { algorithm: 'Ed25519', key_id: signer.keyId, value: '' },
  };
  return { ...pending, signature: { ...pending.signature, value: signer.sign(attestationBytes(pending)) } };
}

/** True when the record was signed by `signer`'s key and nothing it covers changed since. */
export function attestationSignatureValid(
  record: AttestationRecord,
  signer: Pick<CheckpointSigner, 'keyId' | 'publicKeyPem'>,
): boolean {
  if (record.signature.algorithm !== 'Ed25519' || record.signature.key_id !== signer.keyId) return false;
  try {
    return verify(
      null,
      attestationBytes(record),
      createPublicKey(signer.publicKeyPem),
      Buffer.from(record.signature.value, 'base64url'),
    );
  } catch {
    return false;
  }
}

/** Whether an attestation counts at `now`; only `valid` moves a control off Unknown. */
export function attestationState(
  record: AttestationRecord,
  now: Date,
  signatureValid: boolean,
): AttestationState {
  if (!signatureValid) return 'invalid_signature';
  if (record.revoked_at !== null) return 'revoked';
  if (Date.parse(record.attested_at) > now.getTime()) return 'not_yet_valid';
  if (Date.parse(record.expires_at) <= now.getTime()) return 'expired';
  return 'valid';
}
