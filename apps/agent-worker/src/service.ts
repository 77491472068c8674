import {
  QueueGroups,
  Subjects,
  type AgentAbortMessage,
  type AgentCancelMessage,
  type IdempotencySettledMessage,
  type WorkflowCancelMessage,
} from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import type { AuditTrail, InvocationService, RunSweeper, StepExecutor, TriggerFireSweeper, TriggerMatcher } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import { invokeHandler } from './handlers/invoke-handler.ts';
import { consumeTriggerEvents } from './handlers/trigger-handler.ts';
import { consumeWorkflowSteps } from './handlers/workflow-step-handler.ts';
import { createInvocationSlots } from './invocation-slots.ts';

export interface AgentWorkerDeps {
  bus: Bus;
  /** Runs the invocations; built by the composition root over the shared store and providers. */
  invocation: InvocationService;
  /** Appends the requesting HTTP request's audit entry with an invocation's answer (invoke-handler.ts). */
  audit: Pick<AuditTrail, 'record'>;
  logger: Logger;
  /** `[agents]` of the running config: `worker_concurrency`. */
  settings: () => { worker_concurrency: number };
  /** Workflow steps (docs/workflows.md): executed from the `workflow.steps` stream, swept for lost ones. */
  workflows: { executor: StepExecutor; sweeper: RunSweeper; stepConcurrency: () => number };
  /**
   * Trigger matching (docs/events.md "Triggers"): consumes `platform.events` under the durable
   * `trigger-matchers`. `ackWaitMs`: when a delivery is presumed lost (compose.ts picks it per bus). Absent: not consumed here.
   * `sweeper`: records the fires of dead workers lost instead of leaving them `running`.
   */
  triggers?: { matcher: TriggerMatcher; ackWaitMs: number; sweeper?: TriggerFireSweeper };
}

/** Platform events one worker matches at once (each may wait for the invocations it fired). */
const TRIGGER_CONCURRENCY = 16;

export interface AgentWorkerService {
  name: string;
  start(): Promise<void>;
  /** Stops taking invocations and waits for the running ones to finish (the SIGTERM drain). */
  stop(): Promise<void>;
}

/**
 * The agent worker (STYLE §1): serves `agents.invoke` in the `agent-workers` queue group, so any
 * number of workers split the invocations, and listens to three fan-outs to every worker:
 * `agents.abort` aborts the named agent's invocations that run here (suspend, DECISIONS D9),
 * `agents.cancel` stops one invocation whose caller went away, and `agents.idempotency.settled`
 * wakes the repeats of an idempotency key waiting here. At most `[agents] worker_concurrency`
 * invocations run here at once; the others wait in arrival order. It also executes workflow steps
 * from the durable stream `workflow.steps` (shared by every worker), aborts a cancelled run's
 * steps on `workflows.cancel`, and sweeps for runs whose steps were lost (run-sweeper.ts).
 */
export function createAgentWorkerService(deps: AgentWorkerDeps): AgentWorkerService {
  const log = deps.logger.child({ service: 'agent-worker' });
  let subscriptions: Subscription[] = [];
  let listenerCount = 0;
  return {
    name: 'agent-worker',
    async start() {
      const handler = invokeHandler({
        bus: deps.bus,
        invocation: deps.invocation,
        audit: deps.audit,
        logger: log,
        slots: createInvocationSlots(() => deps.settings().worker_concurrency),
      });
      // The listeners first: a cancel or settle sent for an invocation this worker takes must be heard.
      const listeners = await Promise.all([
        deps.bus.listen<AgentAbortMessage>(Subjects.agentAbort, (message) => {
          const aborted = deps.invocation.abortAgent(message.agent_id, message.reason ?? 'suspended');
          if (aborted > 0) log.info({ agent_id: message.agent_id, aborted }, 'aborted in-flight invocations');
        }),
        deps.bus.listen<AgentCancelMessage>(Subjects.agentCancel, (message) => {
          if (deps.invocation.cancel(message.invocation_id, message.reason)) log.info({ invocation_id: message.invocation_id }, 'cancelled an invocation');
        }),
        deps.bus.listen<IdempotencySettledMessage>(Subjects.idempotencySettled, (message) => deps.invocation.idempotencySettled(message.id)),
        deps.bus.listen<WorkflowCancelMessage>(Subjects.workflowCancel, (message) => {
          const aborted = deps.workflows.executor.cancelRun(message.run_id, message.reason);
          if (aborted > 0) log.info({ run_id: message.run_id, aborted }, 'aborted the steps of a cancelled workflow run');
        }),
      ]);
      const invocations = await deps.bus.serve(Subjects.agentInvoke, handler, { queue: QueueGroups.agentWorkers });
      const steps = await consumeWorkflowSteps({ bus: deps.bus, executor: deps.workflows.executor, logger: log, concurrency: deps.workflows.stepConcurrency() });
      const triggers = deps.triggers === undefined ? [] : [await consumeTriggerEvents({ bus: deps.bus, matcher: deps.triggers.matcher, logger: log, concurrency: TRIGGER_CONCURRENCY, ackWaitMs: deps.triggers.ackWaitMs })];
      subscriptions.push(invocations, steps, ...triggers, ...listeners);
      listenerCount = listeners.length;
      deps.workflows.sweeper.start();
      deps.triggers?.sweeper?.start();
      log.debug('agent-worker started');
    },
    async stop() {
      const work = subscriptions.slice(0, subscriptions.length - listenerCount);
      const listeners = subscriptions.slice(subscriptions.length - listenerCount);
      subscriptions = [];
      await deps.workflows.sweeper.stop();
      await deps.triggers?.sweeper?.stop();
      // Work first: it stops arriving, what runs finishes. The listeners stay until then, so a
      // suspend, a cancel or a settled key during the drain still reaches the work here.
      await Promise.all(work.map((s) => s.drain()));
      await Promise.all(listeners.map((l) => l.drain()));
      log.debug('agent-worker stopped');
    },
  };
}
