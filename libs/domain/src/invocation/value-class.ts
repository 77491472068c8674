import type { ValueClass } from '@agent-platform/contracts';

/**
 * Words of a workflow type that place it in a value class (spec §Usage value-events: Intake,
 * Servicing, Recovery, Underwriting, Compliance). Checked in this order; the first class with a
 * matching word wins. docs/usage.md shows the table.
 */
export const VALUE_CLASS_WORDS: ReadonlyArray<readonly [ValueClass, readonly string[]]> = [
  ['intake', ['intake', 'fnol', 'notice']],
  ['recovery', ['recovery', 'recoveries', 'subrogation', 'salvage', 'collection', 'collections']],
  ['underwriting', ['underwriting', 'underwrite', 'quote', 'quotes', 'quoting', 'risk', 'rating', 'submission', 'submissions']],
  ['compliance', ['compliance', 'audit', 'audits', 'kyc', 'aml', 'regulatory', 'sanctions']],
  ['servicing', ['servicing', 'service', 'policy', 'endorsement', 'endorsements', 'renewal', 'renewals', 'billing', 'cancellation']],
];

/**
 * The value class of a workflow type, matched on whole words (`claims_intake`, `claims-intake`,
 * `ClaimsIntake` -> intake), or null when no word matches: such a workflow type still counts in
 * `total` and `by_solution`, just in no class.
 */
export function valueClassOf(workflowType: string): ValueClass | null {
  const words = new Set(
    workflowType
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w !== ''),
  );
  for (const [valueClass, matches] of VALUE_CLASS_WORDS) {
    if (matches.some((w) => words.has(w))) return valueClass;
  }
  return null;
}
