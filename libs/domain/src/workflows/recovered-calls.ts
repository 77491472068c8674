import type { AgentStore } from '../agents/agent-store.ts';
import { auditToolCall, type ToolAuditSink } from '../tools/tool-audit.ts';
import type { ToolCallEntry } from '../tools/tool-call-journal.ts';
import type { WorkflowRunRecord } from './run-record.ts';
import { stepAgent } from './step-agents.ts';

/** The identity workflow steps invoke agents as (their usage rows and logs show it). */
export const WORKFLOW_CALLER = 'system:workflow';

/**
 * The calls a dead worker left `started` and whoever took its step over (a claim, a sweep) just
 * marked `unknown`, recorded as `unknown` in the audit trail (docs/tools.md "The audit trail"):
 * the trail then shows, for every call behind an Escalated run, its start and its lost outcome.
 */
export async function auditRecoveredCalls(
  deps: { audit?: ToolAuditSink | undefined; agents: Pick<AgentStore, 'get' | 'getByName'>; warn: (context: Record<string, unknown>, message: string) => void },
  run: WorkflowRunRecord,
  stepKey: string,
  lapsed: readonly ToolCallEntry[],
): Promise<void> {
  if (lapsed.length === 0 || deps.audit === undefined) return;
  const step = run.definition.steps[Number(stepKey.split('.')[0])];
  const agent = step === undefined ? null : await stepAgent(deps.agents, step.agent).catch(() => null);
  for (const entry of lapsed) {
    await auditToolCall(
      deps.audit,
      { identity: WORKFLOW_CALLER, role: 'system', agent_id: agent?.id ?? '', correlation_id: run.id },
      {
        ...entry,
        result: 'unknown',
        metadata: { idempotency_key: entry.idempotency_key, position: entry.position, run_id: run.id, step_key: stepKey, recovered: true, started_seq: entry.audit_seq ?? null },
      },
      deps.warn,
    );
  }
}
