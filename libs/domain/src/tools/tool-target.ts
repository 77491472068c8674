import type { AgentRecord } from '../agents/agent-record.ts';
import type { AuditRecordInput } from '../audit/audit-entry.ts';
import { Errors } from '../errors/errors.ts';
import type { ToolContext } from '../invocation/invocation-types.ts';
import type { ToolSpec } from '../models/model-provider.ts';
import type { ToolBinding } from '../models/tool-loop.ts';
import { argsHash } from './args-hash.ts';

/** One tool an agent's model can see, before permissions, journaling and audit are applied. */
export interface ToolTarget {
  spec: ToolSpec;
  /** The skill or integration that provides it (AgentResponse `skill_id`). */
  provider_id: string;
  /** The name called on the provider (a contract tool's native tool). */
  native_tool: string;
  /** Journaled before the call in a workflow step (docs/tools.md "Escalated"). */
  state_changing: boolean;
  /** Why the agent may not call it (PermissionDenied); null when it may. */
  refusal: string | null;
  run(args: Record<string, unknown>, options: { signal?: AbortSignal; idempotencyKey?: string }): Promise<string>;
}

export interface ToolCallEffects {
  audit?: { record(input: AuditRecordInput): Promise<unknown> };
  now: () => Date;
  warn: (context: Record<string, unknown>, message: string) => void;
}

/**
 * The binding the tool loop calls for a target: a refused tool is hidden from the model and fails
 * with PermissionDenied if called anyway; a state-changing call in a workflow step is journaled
 * before and confirmed after (a plain invocation passes `<invocation>:<n>` as its idempotency
 * key, unjournaled); every call, refused ones included, is audited with its tool, agent,
 * duration and outcome, the arguments only as a hash.
 */
export function bindTarget(target: ToolTarget, agent: AgentRecord, context: ToolContext, effects: ToolCallEffects, counter: { calls: number }): ToolBinding {
  return {
    skill_id: target.provider_id,
    spec: target.spec,
    ...(target.refusal === null ? {} : { hidden: true }),
    async execute(args, { signal }) {
      const started = effects.now().getTime();
      const hash = argsHash(args);
      let outcome = 'failure';
      try {
        if (target.refusal !== null) {
          outcome = 'refused';
          throw Errors.permissionDenied(target.refusal, { tool: target.spec.name, agent_id: agent.id });
        }
        const text = await callTarget(target, args, hash, context, counter, signal);
        outcome = 'success';
        return text;
      } finally {
        await audit(effects, agent, context, target, { outcome, hash, duration_ms: effects.now().getTime() - started });
      }
    },
  };
}

async function callTarget(
  target: ToolTarget,
  args: Record<string, unknown>,
  hash: string,
  context: ToolContext,
  counter: { calls: number },
  signal: AbortSignal | undefined,
): Promise<string> {
  const options = signal === undefined ? {} : { signal };
  if (!target.state_changing) return target.run(args, options);
  const journal = context.options.toolJournal;
  if (journal === undefined) {
    const key = `${context.request.invocation_id ?? context.request.correlation_id}:${counter.calls++}`;
    return target.run(args, { ...options, idempotencyKey: key });
  }
  const call = await journal.begin({ tool: target.spec.name, provider_id: target.provider_id, native_tool: target.native_tool, args_hash: hash });
  try {
    return await target.run(args, { ...options, idempotencyKey: call.idempotency_key });
  } finally {
    // The call ended in this live worker (answered, or failed): its outcome is not in doubt.
    await journal.confirm(call);
  }
}

async function audit(
  effects: ToolCallEffects,
  agent: AgentRecord,
  context: ToolContext,
  target: ToolTarget,
  call: { outcome: string; hash: string; duration_ms: number },
): Promise<void> {
  if (effects.audit === undefined) return;
  await effects.audit
    .record({
      category: 'tools',
      identity: `agent:${agent.name}`,
      role: 'agent',
      action: `tool.call ${target.spec.name}`,
      target: target.provider_id,
      result: call.outcome,
      metadata: {
        agent_id: agent.id,
        tool: target.spec.name,
        native_tool: target.native_tool,
        duration_ms: Math.max(0, Math.round(call.duration_ms)),
        args_hash: call.hash,
        correlation_id: context.request.correlation_id,
      },
    })
    .catch((err: unknown) => effects.warn({ err, agent_id: agent.id, tool: target.spec.name }, 'could not audit a tool call'));
}
