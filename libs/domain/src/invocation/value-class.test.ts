import { describe, expect, it } from 'vitest';
import { valueClassOf } from './value-class.ts';

describe('valueClassOf', () => {
  it.each([
    ['claims_intake', 'intake'],
    ['claims-intake', 'intake'],
    ['ClaimsIntake', 'intake'],
    ['fnol', 'intake'],
    ['first_notice_of_loss', 'intake'],
    ['policy_endorsement', 'servicing'],
    ['customer_service', 'servicing'],
    ['subrogation', 'recovery'],
    ['salvage_recovery', 'recovery'],
    ['new_business_quote', 'underwriting'],
    ['risk_review', 'underwriting'],
    ['kyc_check', 'compliance'],
    ['regulatory_audit', 'compliance'],
    ['policy_audit', 'compliance'],
  ])('%s -> %s', (workflowType, expected) => {
    expect(valueClassOf(workflowType)).toBe(expected);
  });

  it.each(['operating_report', 'marketing', 'claims', ''])('%s matches no class (whole words only)', (workflowType) => {
    expect(valueClassOf(workflowType)).toBeNull();
  });
});
