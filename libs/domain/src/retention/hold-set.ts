import type { LegalHoldView } from '@agent-platform/contracts';
import type { StoredAuditEntry } from '../audit/audit-chain.ts';
import type { SessionTurn } from '../agents/session-store.ts';
import type { UsageEvent } from '../invocation/usage-events.ts';
import type { WorkflowRunRecord } from '../workflows/run-record.ts';

/**
 * What the legal holds in force cover, decided once per sweep (docs/retention.md "What a hold
 * covers"). An agent hold covers what names the agent; a business-key hold covers the runs
 * carrying the key (their `business_key`, or the key in their input), the usage events of those
 * runs, the transcripts that mention the key, and the audit entries that mention the key or
 * one of those runs. Matching is exact and case-sensitive: a key is a substring match in text.
 */
export interface HoldSet {
  readonly empty: boolean;
  /** Holds in force, for the sweep report. */
  readonly count: number;
  coversAudit(entry: StoredAuditEntry): boolean;
  coversUsage(event: UsageEvent): boolean;
  /** `doc` with its turns' contents (a long turn's read back: TurnContents.resolve). */
  coversTranscript(doc: HeldTranscript): boolean;
  coversRun(run: WorkflowRunRecord): boolean;
}

/** What a hold looks at in a transcript. */
export interface HeldTranscript {
  agent_id: string;
  conversation?: string | undefined;
  turns: readonly SessionTurn[];
}

export interface HoldSetInput {
  holds: readonly LegalHoldView[];
  /** Ids of the runs whose `business_key` is one of `keys` (read through the runs' index). */
  runsWithKey: (keys: readonly string[]) => Promise<string[]>;
}

export async function buildHoldSet(input: HoldSetInput): Promise<HoldSet> {
  const agents = new Set(input.holds.flatMap((h) => (h.agent_id === null ? [] : [h.agent_id])));
  const keys = [...new Set(input.holds.flatMap((h) => (h.business_key === null ? [] : [h.business_key])))];
  const heldRuns = new Set(keys.length === 0 ? [] : await input.runsWithKey(keys));
  const needles = [...agents, ...keys, ...heldRuns];
  const mentions = (text: string): boolean => needles.some((n) => text.includes(n));
  const keyIn = (text: string): boolean => keys.some((k) => text.includes(k));

  return {
    empty: agents.size === 0 && keys.length === 0,
    count: input.holds.length,
    coversAudit(entry) {
      if (needles.length === 0) return false;
      const metadata =
        entry.metadata === null || entry.metadata === undefined ? '' : JSON.stringify(entry.metadata);
      return mentions(String(entry.target)) || mentions(metadata);
    },
    coversUsage(event) {
      return agents.has(event.agent_id) || (event.run_id !== undefined && heldRuns.has(event.run_id));
    },
    coversTranscript(doc) {
      if (agents.has(doc.agent_id)) return true;
      if (keys.length === 0) return false;
      return (
        (doc.conversation !== undefined && keys.includes(doc.conversation)) ||
        doc.turns.some((t) => keyIn(t.content))
      );
    },
    coversRun(run) {
      if (
        heldRuns.has(run.id) ||
        (run.business_key !== undefined && keys.includes(run.business_key)) ||
        keyIn(run.input)
      )
        return true;
      if (agents.size === 0) return false;
      return (
        run.step_results.some((r) => agents.has(r.agent_id)) ||
        [...agents].some((a) => JSON.stringify(run.definition.steps).includes(a))
      );
    },
  };
}
