import { Type, type Static, type TLiteral, type TUnion } from 'typebox';

/**
 * The categories of personal data the privacy gateway detects (docs/privacy-gateway.md). The one
 * list: the config's `[gateway] categories`, the audit metadata of `gateway.pii.*` and
 * `gateway.routing` entries, `/gateway/traffic` and the detectors all use these names.
 */
export const PII_CATEGORIES = [
  'policy_number',
  'claim_number',
  'national_id',
  'payment_card',
  'bank_account',
  'email',
  'phone',
  'date_of_birth',
  'address',
  'person_name',
] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];
// A union of literals (not Type.Enum) so that a wrong value is refused naming every allowed one;
// the tuple type keeps the literal types that `map` loses (as `Literals` in packages.ts).
type LiteralTuple<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };
function literals<const T extends readonly string[]>(values: T): TUnion<LiteralTuple<T>> {
  return Type.Union(values.map((v) => Type.Literal(v))) as TUnion<LiteralTuple<T>>;
}
export const PiiCategory = literals(PII_CATEGORIES);

/**
 * What `[gateway] categories` holds when the file leaves it out: everything except `person_name`,
 * whose detector is a heuristic (and slow on long conversations) that a carrier turns on knowingly.
 */
export const DEFAULT_PII_CATEGORIES: readonly PiiCategory[] = PII_CATEGORIES.filter(
  (c) => c !== 'person_name',
);

/** Counts per category, e.g. `{email: 2, phone: 1}`: never a value. */
export const PiiCategoryCounts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }));
export type PiiCategoryCounts = Static<typeof PiiCategoryCounts>;

/** The audit actions of the privacy gateway (audit category `privacy`, docs/privacy-gateway.md "Audit events"). */
export const PRIVACY_AUDIT_ACTIONS = {
  tokenised: 'gateway.pii.tokenised',
  hydrated: 'gateway.pii.hydrated',
  routing: 'gateway.routing',
} as const;
