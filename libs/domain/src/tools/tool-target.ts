import type { AgentRecord } from '../agents/agent-record.ts';
import { Errors } from '../errors/errors.ts';
import type { ToolContext } from '../invocation/invocation-types.ts';
import type { ToolSpec } from '../models/model-provider.ts';
import type { ToolBinding } from '../models/tool-loop.ts';
import { argsHash } from './args-hash.ts';
import type { CallEffects, CallSequence } from './journaled-calls.ts';
import { auditToolCall, type ToolAuditSubject } from './tool-audit.ts';

/** One tool an agent's model can see, before permissions, journaling and audit are applied. */
export interface ToolTarget {
  spec: ToolSpec;
  /** The skill or integration that provides it (AgentResponse `skill_id`). */
  provider_id: string;
  /** The name called on the provider (a contract tool's native tool). */
  native_tool: string;
  /** Journaled before and after the call (docs/tools.md "The tool-call journal"). */
  state_changing: boolean;
  /**
   * Whether its integration honours idempotency keys (`[integrations.idempotent_keys]`, the
   * manifest's `[standards]`): asked only when a state-changing call is made.
   */
  honoursKeys: () => Promise<boolean>;
  /** Why the agent may not call it (PermissionDenied); null when it may. */
  refusal: string | null;
  /** The call; `is_error` is the server's own failure (an answer). Throws for failures on the platform's side. */
  run(args: Record<string, unknown>, options: { signal?: AbortSignal; idempotencyKey?: string }): Promise<{ text: string; is_error: boolean }>;
}

/** What a tool call needs around it: the audit trail, the time, this process, the fault points. */
export type ToolCallEffects = CallEffects;

/** Who the agent's tool calls are audited as. */
export function auditSubject(agent: AgentRecord, context: ToolContext): ToolAuditSubject {
  return { identity: `agent:${agent.name}`, role: 'agent', agent_id: agent.id, correlation_id: context.request.correlation_id };
}

/**
 * The binding the tool loop calls for a target: a refused tool is hidden from the model and fails
 * with PermissionDenied if called anyway (audited `refused`); a read-only call is made and audited
 * once with its outcome; a state-changing call goes through the execution's journaled call
 * sequence (replayed, or journaled and audited before and after). Arguments are audited only as a hash.
 */
export function bindTarget(target: ToolTarget, subject: ToolAuditSubject, effects: ToolCallEffects, calls: CallSequence): ToolBinding {
  const audit = (result: 'success' | 'failure' | 'refused', hash: string, durationMs: number) =>
    auditToolCall(effects.audit, subject, { tool: target.spec.name, provider_id: target.provider_id, native_tool: target.native_tool, args_hash: hash, result, metadata: { duration_ms: Math.max(0, Math.round(durationMs)) } }, effects.warn);
  return {
    skill_id: target.provider_id,
    spec: target.spec,
    ...(target.refusal === null ? {} : { hidden: true }),
    async execute(args, { signal }) {
      const hash = argsHash(args);
      if (target.refusal !== null) {
        await audit('refused', hash, 0);
        throw Errors.permissionDenied(target.refusal, { tool: target.spec.name, agent_id: subject.agent_id });
      }
      if (target.state_changing) {
        return calls.call(
          { tool: target.spec.name, provider_id: target.provider_id, native_tool: target.native_tool, honoursKeys: target.honoursKeys, run: (a, o) => target.run(a, o) },
          args,
          hash,
          signal,
        );
      }
      const started = effects.now().getTime();
      let result: 'success' | 'failure' = 'failure';
      try {
        const answer = await target.run(args, signal === undefined ? {} : { signal });
        if (answer.is_error) throw new Error(`'${target.native_tool}' answered with an error: ${answer.text}`);
        result = 'success';
        return answer.text;
      } finally {
        await audit(result, hash, effects.now().getTime() - started);
      }
    },
  };
}
