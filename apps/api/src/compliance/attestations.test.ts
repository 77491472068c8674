import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttestationView, ComplianceControl, ComplianceReport } from '@agent-platform/contracts';
import { fixedClock } from '@agent-platform/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editStore, startCompliancePlatform, type CompliancePlatform } from './compliance-fixture.ts';

// Signed attestations of manual controls (docs/compliance.md "Attestations"): an auditor or an
// admin attests; the platform signs the statement with its checkpoint key and records it in the
// audit trail; the control moves off Unknown while the attestation is valid, and back when it
// expires or is revoked. A regulator can check the signature later with openssl alone.
const NOW = '2026-11-10T12:00:00.000Z';
const DOC = 'b'.repeat(64);
const ATTEST = {
  pack_id: 'naic-ais-bulletin',
  control_id: 'NAIC-01',
  document_sha256: `sha256:${DOC.toUpperCase()}`,
  statement: 'The board adopted the AIS Program on 2026-10-01.',
  expires_at: '2027-11-10',
};

let dir: string;
let platform: CompliancePlatform;
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-attest-'));
  clock = fixedClock(NOW);
  platform = await startCompliancePlatform('well-run', { clock, dir });
});

afterEach(async () => {
  await platform?.api.close();
  await rm(dir, { recursive: true, force: true });
});

async function control(id: string, pack = 'naic-ais-bulletin'): Promise<ComplianceControl> {
  const res = await platform.api.request('GET', `/compliance/packs/${pack}/report`, {
    token: platform.auditor,
  });
  return (res.body as ComplianceReport).controls.find((c) => c.control_id === id)!;
}

async function attest(body: Record<string, unknown> = ATTEST, token = platform.auditor) {
  return platform.api.request('POST', '/compliance/attestations', { token, body });
}

describe('attestations', () => {
  it('an auditor attests a manual control: signed, recorded, and the control is Satisfied until it expires', async () => {
    const { api, auditor } = platform;
    expect(await control('NAIC-01')).toMatchObject({
      status: 'Unknown',
      evaluated_at: null,
      attestation: null,
    });
    // Before the auditor's own 90-day key expires, so that the expiry below can be observed with it.
    const created = await attest({ ...ATTEST, expires_at: '2027-01-10' });
    expect(created.status).toBe(201);
    const view = created.body as AttestationView;
    const checkpoints = await api.request('GET', '/security/checkpoints', { token: auditor });
    expect(view).toMatchObject({
      pack_id: 'naic-ais-bulletin',
      control_id: 'NAIC-01',
      document_sha256: DOC,
      attested_at: NOW,
      expires_at: '2027-01-10T00:00:00.000Z',
      identity: 'external-auditor',
      role: 'auditor',
      external: null,
      signature: { algorithm: 'Ed25519', key_id: checkpoints.body.key_id },
      revoked_at: null,
      state: 'valid',
    });

    const attested = await control('NAIC-01');
    expect(attested).toMatchObject({
      status: 'Satisfied',
      evaluated_at: NOW,
      attestation: { id: view.id, state: 'valid' },
    });
    expect(attested.evidence_description).toBe(
      `Manual part attested by external-auditor (auditor) on ${NOW}, valid until 2027-01-10T00:00:00.000Z: document sha256 ${DOC}.`,
    );

    const trail = await api.request('GET', '/security/audit?category=compliance', { token: auditor });
    expect(trail.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'POST /compliance/attestations',
      'compliance.attestation.created',
    ]);
    expect(trail.body.entries[1]).toMatchObject({
      identity: 'external-auditor',
      role: 'auditor',
      target: 'naic-ais-bulletin/NAIC-01',
      metadata: { attestation_id: view.id, document_sha256: DOC, signature: view.signature.value },
    });

    clock.set('2027-01-10T00:00:00.000Z');
    const expired = await control('NAIC-01');
    expect(expired).toMatchObject({
      status: 'Unknown',
      evaluated_at: null,
      attestation: { id: view.id, state: 'expired' },
    });
    expect(expired.evidence_description).toContain(
      'the attestation by external-auditor (auditor) expired on 2027-01-10T00:00:00.000Z',
    );
  });

  it('a control with automatic checks and a manual part needs both: the checks pass and the attestation is valid', async () => {
    expect(await control('NAIC-05')).toMatchObject({ status: 'Unknown', evaluated_at: NOW });
    const made = await attest(
      { ...ATTEST, control_id: 'NAIC-05', expires_at: undefined, expires_in: '365d' },
      platform.admin,
    );
    expect(made.status).toBe(201);
    expect(made.body.expires_at).toBe('2027-11-10T12:00:00.000Z');
    const both = await control('NAIC-05');
    expect(both).toMatchObject({
      status: 'Satisfied',
      attestation: { identity: 'ciso-office', role: 'admin', state: 'valid' },
    });
    expect(both.evidence.map((e) => e.status)).toEqual(['Satisfied', 'Satisfied']);
  });

  it('revoking leaves the record, puts the control back to Unknown, and is recorded; revoking again changes nothing', async () => {
    const { api, auditor, admin } = platform;
    const id = ((await attest()).body as AttestationView).id;
    clock.advance(60_000);
    const revoked = await api.request('DELETE', `/compliance/attestations/${id}`, { token: admin });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({
      id,
      state: 'revoked',
      revoked_by: 'ciso-office',
      revoked_at: '2026-11-10T12:01:00.000Z',
    });
    expect(await control('NAIC-01')).toMatchObject({
      status: 'Unknown',
      attestation: { id, state: 'revoked' },
    });
    const again = await api.request('DELETE', `/compliance/attestations/${id}`, { token: auditor });
    expect(again.body).toMatchObject({ state: 'revoked', revoked_by: 'ciso-office' });
    const trail = await api.request('GET', '/security/audit?category=compliance', { token: auditor });
    expect(
      trail.body.entries.filter((e: { action: string }) => e.action === 'compliance.attestation.revoked'),
    ).toHaveLength(1);
    expect(
      (await api.request('DELETE', '/compliance/attestations/no-such-id', { token: admin })).status,
    ).toBe(404);

    const list = await api.request('GET', '/compliance/attestations?pack_id=naic-ais-bulletin', {
      token: auditor,
    });
    expect(list.body).toMatchObject({
      key_id: expect.stringMatching(/^sha256:/),
      public_key: expect.stringMatching(/^ed25519:/),
      attestations: [{ id, state: 'revoked' }],
    });
  });

  it('a valid attestation elsewhere keeps the control Satisfied when another is revoked', async () => {
    const first = ((await attest()).body as AttestationView).id;
    clock.advance(1000);
    const second = ((await attest({ ...ATTEST, expires_at: '2027-06-01T00:00:00Z' })).body as AttestationView)
      .id;
    await platform.api.request('DELETE', `/compliance/attestations/${first}`, { token: platform.admin });
    expect(await control('NAIC-01')).toMatchObject({
      status: 'Satisfied',
      attestation: { id: second, state: 'valid' },
    });
  });

  it('refuses what it cannot sign truthfully, with a clear error, and stores nothing', async () => {
    const { api, auditor } = platform;
    const cases: Array<[Record<string, unknown>, number, RegExp | string]> = [
      [{ ...ATTEST, pack_id: 'hipaa' }, 404, "compliance pack 'hipaa' not found"],
      [{ ...ATTEST, control_id: 'NAIC-99' }, 400, "pack naic-ais-bulletin has no control 'NAIC-99'"],
      [
        { ...ATTEST, control_id: 'NAIC-08' },
        400,
        'control NAIC-08 of pack naic-ais-bulletin is checked from platform evidence alone; it takes no attestation',
      ],
      [
        { ...ATTEST, expires_at: '2026-11-09' },
        400,
        "field 'expires_at' must be in the future (now is 2026-11-10T12:00:00.000Z)",
      ],
      [
        { ...ATTEST, expires_at: '2030-01-01' },
        400,
        'the expiry is more than 1096 days ahead ([compliance] attestation_max_days): attestations must be renewed',
      ],
      [
        { ...ATTEST, expires_at: undefined, expires_in: '1100d' },
        400,
        'the expiry is more than 1096 days ahead',
      ],
      [
        { ...ATTEST, expires_in: '30d' },
        400,
        "give exactly one of 'expires_at' (an ISO 8601 date) and 'expires_in' (a duration such as 365d)",
      ],
      [{ ...ATTEST, expires_at: undefined }, 400, "give exactly one of 'expires_at'"],
      [{ ...ATTEST, expires_at: undefined, expires_in: 'a year' }, 400, "invalid duration 'a year'"],
      [
        { ...ATTEST, expires_at: 'next year' },
        400,
        "field 'expires_at' must be an ISO 8601 date or date-time (got 'next year')",
      ],
      [{ ...ATTEST, document_sha256: 'abc' }, 400, /document_sha256/],
      [{ ...ATTEST, signer: 'me' }, 400, "unknown field 'signer'"],
      [{ ...ATTEST, statement: '' }, 400, /statement/],
    ];
    for (const [body, status, message] of cases) {
      const res = await attest(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.message).toMatch(message);
    }
    for (const role of ['viewer', 'operator', 'developer'] as const) {
      expect((await attest(ATTEST, await api.issueKey(role))).status, role).toBe(403);
    }
    expect(
      (await api.request('GET', '/compliance/attestations', { token: auditor })).body.attestations,
    ).toEqual([]);
  });

  it('an attestation altered in the store no longer verifies and no longer counts', async () => {
    const { api, auditor } = platform;
    const id = ((await attest()).body as AttestationView).id;
    editStore(
      api.dataDir,
      "UPDATE c_compliance_attestations SET body = json_set(body, '$.expires_at', '2029-01-01T00:00:00.000Z') WHERE id = ?",
      id,
    );
    const list = await api.request('GET', '/compliance/attestations', { token: auditor });
    expect(list.body.attestations).toEqual([expect.objectContaining({ id, state: 'invalid_signature' })]);
    const altered = await control('NAIC-01');
    expect(altered).toMatchObject({ status: 'Unknown', attestation: { id, state: 'invalid_signature' } });
    expect(altered.evidence_description).toContain('does not verify with the platform key');
  });

  it('a regulator checks the signature with openssl alone, from the record and the published key (docs/compliance.md)', async () => {
    const view = (await attest()).body as AttestationView;
    const { public_key } = (
      await platform.api.request('GET', '/compliance/attestations', { token: platform.auditor })
    ).body as { public_key: string };
    // The documented recipe: the signed fields, keys sorted, no whitespace.
    const { signature, revoked_at: _r, revoked_by: _b, state: _s, ...fields } = view;
    const statement = { ...fields, format: 'agent-platform/attestation/1', key_id: signature.key_id };
    const sorted = JSON.stringify(
      Object.fromEntries(Object.entries(statement).sort(([a], [b]) => (a < b ? -1 : 1))),
    );
    const raw = Buffer.from(public_key.replace(/^ed25519:/, ''), 'base64url');
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]);
    const pem = `-----BEGIN PUBLIC KEY-----\n${spki.toString('base64')}\n-----END PUBLIC KEY-----\n`;
    await writeFile(join(dir, 'statement.json'), sorted);
    await writeFile(join(dir, 'signature.bin'), Buffer.from(signature.value, 'base64url'));
    await writeFile(join(dir, 'platform-key.pem'), pem);
    const verify = (file: string) =>
      execFileSync(
        'openssl',
        [
          'pkeyutl',
          '-verify',
          '-pubin',
          '-inkey',
          join(dir, 'platform-key.pem'),
          '-rawin',
          '-in',
          file,
          '-sigfile',
          join(dir, 'signature.bin'),
        ],
        { encoding: 'utf8', stdio: 'pipe' },
      );
    expect(verify(join(dir, 'statement.json'))).toContain('Signature Verified Successfully');
    await writeFile(join(dir, 'forged.json'), sorted.replace('2027-11-10', '2029-11-10'));
    expect(() => verify(join(dir, 'forged.json'))).toThrow();
  });
});
