import {
  QueueGroups,
  Subjects,
  type AgentInvokeReply,
  type AgentInvokeRequest,
} from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { AgentRecord, AgentStore } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';

/** What the stand-in answers a request with: a reply, a DuplicateInvocation reply, an error, or a wait first. */
export type StandInOutcome = 'ok' | 'duplicate' | Error | Promise<void>;

export interface SeenRequest extends AgentInvokeRequest {
  at: number;
}

/**
 * A stand-in agent worker for scheduler tests: serves `agents.invoke` in queue group
 * `agent-workers`, records every request, and answers from `script` (then 'ok'). A promise in the
 * script holds that request until it settles. The invocation itself is tested in libs/domain and
 * apps/platform; here only what reaches the worker matters.
 */
export async function serveStandInWorker(bus: Bus, script: StandInOutcome[] = []): Promise<SeenRequest[]> {
  const seen: SeenRequest[] = [];
  await bus.serve<AgentInvokeRequest, AgentInvokeReply>(
    Subjects.agentInvoke,
    async (request) => {
      seen.push({ ...request, at: Date.now() });
      let outcome = script.shift() ?? 'ok';
      if (outcome instanceof Promise) {
        await outcome;
        outcome = 'ok';
      }
      if (outcome instanceof Error) throw outcome;
      return {
        result: {
          content: 'done',
          tokens_used: 1,
          duration_ms: 1,
          correlation_id: request.correlation_id,
          source: request.source,
          tool_calls: [],
          usage: { input_tokens: 1, output_tokens: 0 },
        },
        duplicate: outcome === 'duplicate',
      };
    },
    { queue: QueueGroups.agentWorkers },
  );
  return seen;
}

/** The slot a request was fired for (its Cron source's `scheduled_at`). */
export function slotOf(request: AgentInvokeRequest): string {
  return (request.source as { Cron: { scheduled_at: string } }).Cron.scheduled_at;
}

/** Inserts an agent as an install leaves it (Running unless said otherwise). */
export function insertAgent(agents: AgentStore, state: AgentRecord['state'] = 'Running'): Promise<AgentRecord> {
  return agents.insert(agentFixture({ state }));
}
