import type { ControlStatus, EvidencePointer } from '@agent-platform/contracts';
import type { StoredAuditEntry } from '@agent-platform/domain';
import type { LogEntry } from '@agent-platform/store';
import type { Static, TSchema } from 'typebox';
import type { EvidenceFacts } from './evidence-facts.ts';

/** One audit entry as the evidence scan sees it (every hashed field, with its seq and hash). */
export type ScannedEntry = LogEntry<StoredAuditEntry>;

/** What one evidence check found: its status, a sentence, and where to look. */
export interface EvidenceOutcome {
  status: ControlStatus;
  summary: string;
  pointers: EvidencePointer[];
}

/**
 * A reader of the audit trail during the report's one pass over it. Every check that reads
 * entries registers a tap instead of walking the trail itself, so a report costs one scan
 * however many controls look at the trail.
 */
export interface AuditTap {
  /** Only entries with a timestamp at or after this (ISO, UTC) are offered; null = every entry. */
  since: string | null;
  /** Called once per entry, in seq order. Must not throw. */
  see(entry: ScannedEntry): void;
}

/** A check ready to run: its taps are fed by the scan, then `evaluate` decides. */
export interface PlannedCheck {
  taps: AuditTap[];
  evaluate(facts: EvidenceFacts): Promise<EvidenceOutcome>;
}

/**
 * One kind of evidence (docs/compliance.md "Evidence kinds"): the closed catalogue a pack's
 * `evidence` entries name. `params` is the schema of the parameters written beside `kind`
 * (strict: an unknown parameter is a load error naming it).
 */
export interface EvidenceKind<S extends TSchema = TSchema> {
  readonly kind: string;
  /** One line for docs and error messages: what the check looks at. */
  readonly describes: string;
  readonly params: S;
  plan(params: Static<S>, now: Date): PlannedCheck;
}

/** Declares a kind with its parameter type inferred from the schema. */
export function evidenceKind<S extends TSchema>(kind: EvidenceKind<S>): EvidenceKind {
  return kind;
}

/** A check that needs no audit entries. */
export function direct(
  evaluate: (facts: EvidenceFacts) => Promise<EvidenceOutcome> | EvidenceOutcome,
): PlannedCheck {
  return { taps: [], evaluate: async (facts) => evaluate(facts) };
}

/** `now` minus whole days, as the trail stores timestamps (`toISOString`). */
export function daysBefore(now: Date, days: number): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}

/** `12-40` for a range, `12` for one entry. */
export function seqRange(first: number, last: number): string {
  return first === last ? String(first) : `${first}-${last}`;
}

/** `a, b, c (and 7 more)`: lists in a report stay readable. */
export function listSome(items: readonly string[], max = 8): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} (and ${items.length - max} more)`;
}

/** `1 credential`, `3 credentials`; `entry` -> `entries`. */
export function plural(count: number, word: string): string {
  if (count === 1) return `${count} ${word}`;
  return `${count} ${word.endsWith('y') && !/[aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : `${word}s`}`;
}
