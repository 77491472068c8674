import type { AuditRecordInput } from '../audit/audit-entry.ts';

/** Who a tool call is audited as, and what it belongs to. */
export interface ToolAuditSubject {
  /** `agent:<agent name>`, or the system process that recovered the call. */
  identity: string;
  role: string;
  agent_id: string;
  correlation_id: string;
}

export interface ToolAuditSink {
  /** Resolves to the stored entry (its `seq` is read when present). */
  record(input: AuditRecordInput): Promise<unknown>;
}

/** One audit entry of a tool call. */
export interface ToolAuditCall {
  tool: string;
  provider_id: string;
  native_tool: string;
  args_hash: string;
  /**
   * `success`, `failure`, `refused` (read-only and refused calls: one entry each); a
   * state-changing call has `started` before the request leaves, then `success`, `failure` or
   * `unknown`; a re-run given the recorded answer is `replayed`.
   */
  result: 'success' | 'failure' | 'refused' | 'started' | 'unknown' | 'replayed';
  /** Anything else the entry names: key, position, duration, journal scope, original seq. */
  metadata?: Record<string, unknown>;
}

/**
 * Writes the entry (category `tools`, action `tool.call <tool>`, docs/tools.md "The audit trail")
 * and resolves to its seq; a failure to audit is logged, never raised: the call has happened or is
 * about to, and the journal, not the audit trail, decides what a re-run does.
 */
export async function auditToolCall(
  sink: ToolAuditSink | undefined,
  subject: ToolAuditSubject,
  call: ToolAuditCall,
  warn: (context: Record<string, unknown>, message: string) => void,
): Promise<number | undefined> {
  if (sink === undefined) return undefined;
  try {
    const entry = await sink.record({
      category: 'tools',
      identity: subject.identity,
      role: subject.role,
      action: `tool.call ${call.tool}`,
      target: call.provider_id,
      result: call.result,
      metadata: {
        agent_id: subject.agent_id,
        tool: call.tool,
        native_tool: call.native_tool,
        args_hash: call.args_hash,
        correlation_id: subject.correlation_id,
        ...call.metadata,
      },
    });
    const seq = (entry as { seq?: unknown } | null)?.seq;
    return typeof seq === 'number' ? seq : undefined;
  } catch (err) {
    warn({ err, agent_id: subject.agent_id, tool: call.tool }, 'could not audit a tool call');
    return undefined;
  }
}
