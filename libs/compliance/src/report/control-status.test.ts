import type { AttestationView, EvidenceResult } from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import { controlStatus, shownAttestation } from './control-result.ts';

const check = (status: EvidenceResult['status']): EvidenceResult => ({
  platform_control: 'PC-X',
  kind: 'audit_chain',
  status,
  summary: '',
  pointers: [],
});

describe('controlStatus (docs/compliance.md "How a status is decided")', () => {
  it.each([
    // evidence, attestation required, attested -> status
    [[], true, false, 'Unknown'],
    [[], true, true, 'Satisfied'],
    [['Satisfied'], false, false, 'Satisfied'],
    [['Satisfied', 'Unsatisfied'], false, false, 'Unsatisfied'],
    [['Satisfied', 'Unknown'], false, false, 'Unknown'],
    [['Satisfied'], true, false, 'Unknown'],
    [['Satisfied'], true, true, 'Satisfied'],
    [['Unknown'], true, true, 'Unknown'],
    // A failing check wins over a valid attestation: a signature cannot outvote the platform.
    [['Unsatisfied'], true, true, 'Unsatisfied'],
    [['Unsatisfied', 'Unknown'], true, false, 'Unsatisfied'],
  ] as const)('%j, attestation required %s, attested %s -> %s', (statuses, required, attested, expected) => {
    expect(controlStatus(statuses.map(check), required, attested)).toBe(expected);
  });
});

describe('shownAttestation', () => {
  const a = (id: string, state: AttestationView['state'], attested_at: string, expires_at: string) =>
    ({ id, state, attested_at, expires_at }) as AttestationView;

  it('shows the valid attestation that runs longest, else the newest one whatever its state', () => {
    const valid1 = a('1', 'valid', '2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z');
    const valid2 = a('2', 'valid', '2026-02-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
    const revoked = a('3', 'revoked', '2026-03-01T00:00:00.000Z', '2028-01-01T00:00:00.000Z');
    expect(shownAttestation([valid2, revoked, valid1])?.id).toBe('1');
    expect(
      shownAttestation([a('4', 'expired', '2025-01-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z'), revoked])
        ?.id,
    ).toBe('3');
    expect(shownAttestation([])).toBeNull();
  });
});
