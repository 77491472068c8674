import { QueueGroups, Subjects, type AgentAbortMessage } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import type { InvocationService } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import { invokeHandler } from './handlers/invoke-handler.ts';
import { createInvocationSlots } from './invocation-slots.ts';

export interface AgentWorkerDeps {
  bus: Bus;
  /** Runs the invocations; built by the composition root over the shared store and providers. */
  invocation: InvocationService;
  logger: Logger;
  /** `[agents]` of the running config: `worker_concurrency` and `invocation_timeout_secs`. */
  settings: () => { worker_concurrency: number; invocation_timeout_secs: number };
}

export interface AgentWorkerService {
  name: string;
  start(): Promise<void>;
  /** Stops taking invocations and waits for the running ones to finish (the SIGTERM drain). */
  stop(): Promise<void>;
}

/**
 * The agent worker (STYLE §1): serves `agents.invoke` in the `agent-workers` queue group, so any
 * number of workers split the invocations, and listens to `agents.abort` (a fan-out to every
 * worker), aborting the named agent's invocations that run here (suspend, DECISIONS D9). At most
 * `[agents] worker_concurrency` invocations run here at once; the others wait in arrival order.
 */
export function createAgentWorkerService(deps: AgentWorkerDeps): AgentWorkerService {
  const log = deps.logger.child({ service: 'agent-worker' });
  let subscriptions: Subscription[] = [];
  return {
    name: 'agent-worker',
    async start() {
      const handler = invokeHandler({
        bus: deps.bus,
        invocation: deps.invocation,
        logger: log,
        slots: createInvocationSlots(() => deps.settings().worker_concurrency),
        timeoutSecs: () => deps.settings().invocation_timeout_secs,
      });
      subscriptions.push(await deps.bus.serve(Subjects.agentInvoke, handler, { queue: QueueGroups.agentWorkers }));
      subscriptions.push(
        await deps.bus.listen<AgentAbortMessage>(Subjects.agentAbort, (message) => {
          const aborted = deps.invocation.abortAgent(message.agent_id, message.reason ?? 'suspended');
          if (aborted > 0) log.info({ agent_id: message.agent_id, aborted }, 'aborted in-flight invocations');
        }),
      );
      log.debug('agent-worker started');
    },
    async stop() {
      const [invocations, aborts] = subscriptions;
      subscriptions = [];
      // Invocations first: they stop arriving, the running ones finish. The abort listener stays
      // until then, so a suspend during the drain still reaches the work in flight here.
      await invocations?.drain();
      await aborts?.drain();
      log.debug('agent-worker stopped');
    },
  };
}
