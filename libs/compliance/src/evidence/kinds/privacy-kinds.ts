import { Type } from 'typebox';
import {
  daysBefore,
  evidenceKind,
  seqRange,
  type EvidenceOutcome,
} from '../evidence-kind.ts';

/**
 * Evidence over the privacy gateway's audit entries (category `privacy`): `gateway.pii.tokenised`
 * `{count, categories, provider, model, correlation_id}`, `gateway.pii.hydrated` `{count,
 * categories, correlation_id}` and `gateway.routing` `{pii_detected, pii_categories,
 * local_eligible, forced_local, requested_provider, provider, model, correlation_id}`.
 */

const WithinDays = Type.Optional(
  Type.Integer({ minimum: 1, maximum: 36_600, description: 'Only entries of the last N days.' }),
);

/** First and last seq of the entries a check counted. */
class SeqSpan {
  first: number | null = null;
  last: number | null = null;
  add(seq: number): void {
    this.first ??= seq;
    this.last = seq;
  }
  pointer(what: string) {
    return this.first === null || this.last === null
      ? []
      : [{ type: 'audit_seq', ref: seqRange(this.first, this.last), detail: what }];
  }
}

const disabled: EvidenceOutcome = {
  status: 'Unknown',
  summary: "The audit trail is disabled: the privacy gateway's events are not recorded.",
  pointers: [{ type: 'config', ref: 'audit.enabled', detail: 'false' }],
};

export const piiTokenisation = evidenceKind({
  kind: 'pii_tokenisation',
  describes:
    'The privacy gateway tokenised PII before it left for a model (gateway.pii.tokenised) and restored it in replies (gateway.pii.hydrated); coverage = hydrated / tokenised x 100, at least min_coverage_pct when given.',
  params: Type.Object(
    {
      min_coverage_pct: Type.Optional(
        Type.Number({ minimum: 0, maximum: 100, description: 'An internal target; no regulator sets one.' }),
      ),
      within_days: WithinDays,
    },
    { additionalProperties: false },
  ),
  plan: (params, now) => {
    let tokenised = 0;
    let hydrated = 0;
    const span = new SeqSpan();
    const window = params.within_days === undefined ? '' : ` in the last ${params.within_days} days`;
    return {
      taps: [
        {
          since: params.within_days === undefined ? null : daysBefore(now, params.within_days),
          see: (entry) => {
            if (entry.category !== 'privacy') return;
            // Entries, not their `count` of values: one tokenised entry per model request with PII,
            // one hydrated entry per reply put back, exactly as GET /compliance/pii-coverage counts
            // (docs/privacy-gateway.md), so the report and the route never disagree.
            if (entry.action === 'gateway.pii.tokenised') tokenised += 1;
            else if (entry.action === 'gateway.pii.hydrated') hydrated += 1;
            else return;
            span.add(entry.seq);
          },
        },
      ],
      evaluate: async (facts) => {
        if (!facts.auditEnabled) return disabled;
        if (tokenised === 0)
          return {
            status: 'Unknown',
            summary: `The privacy gateway recorded no tokenised PII${window}.`,
            pointers: span.pointer('privacy events'),
          };
        const coverage = (hydrated / tokenised) * 100;
        const figures = `Model requests with PII tokenised${window}: ${tokenised}; replies restored: ${hydrated} (coverage ${coverage.toFixed(1)}%)`;
        const pointers = span.pointer('gateway.pii.tokenised / hydrated');
        if (params.min_coverage_pct !== undefined && coverage < params.min_coverage_pct) {
          return {
            status: 'Unsatisfied',
            summary: `${figures}, below the ${params.min_coverage_pct}% target.`,
            pointers,
          };
        }
        return {
          status: 'Satisfied',
          summary: `${figures}: PII left the platform only as tokens.`,
          pointers,
        };
      },
    };
  },
});

export const forcedLocalRouting = evidenceKind({
  kind: 'forced_local_routing',
  describes:
    'Of the model calls carrying detected PII that a local model could serve (gateway.routing, local_eligible), at least target_pct % were forced to the local model; routing events without detected-PII metadata are left out.',
  params: Type.Object(
    {
      target_pct: Type.Optional(
        Type.Number({
          minimum: 0,
          maximum: 100,
          description: "Default 85.0, the platform's internal target.",
        }),
      ),
      within_days: WithinDays,
    },
    { additionalProperties: false },
  ),
  plan: (params, now) => {
    const target = params.target_pct ?? 85;
    let eligible = 0;
    let forced = 0;
    const span = new SeqSpan();
    const window = params.within_days === undefined ? '' : ` in the last ${params.within_days} days`;
    return {
      taps: [
        {
          since: params.within_days === undefined ? null : daysBefore(now, params.within_days),
          see: (entry) => {
            if (entry.category !== 'privacy' || entry.action !== 'gateway.routing') return;
            const meta = entry.metadata ?? {};
            // Only calls with detected PII, exactly as GET /compliance/forced-local-routing counts
            // (spec §Compliance: routing events lacking detected-PII metadata are excluded; a call
            // where nothing was found, pii_detected false, is no call "with detected PII" either).
            if (meta.pii_detected !== true || meta.local_eligible !== true) return;
            eligible += 1;
            if (meta.forced_local === true) forced += 1;
            span.add(entry.seq);
          },
        },
      ],
      evaluate: async (facts) => {
        if (!facts.auditEnabled) return disabled;
        if (eligible === 0)
          return {
            status: 'Unknown',
            summary: `No local-eligible model call with detected PII was routed${window}.`,
            pointers: [],
          };
        const pct = (forced / eligible) * 100;
        const figures = `${forced} of ${eligible} local-eligible calls with detected PII (${pct.toFixed(1)}%) were forced to the local model${window}`;
        const pointers = span.pointer('gateway.routing, local-eligible');
        return pct >= target
          ? { status: 'Satisfied', summary: `${figures}; target ${target}%.`, pointers }
          : { status: 'Unsatisfied', summary: `${figures}, below the ${target}% target.`, pointers };
      },
    };
  },
});
