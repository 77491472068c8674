import { Streams, type WorkflowStepMessage } from '@agent-platform/contracts';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { StepContinuation, StepExecutor } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { waitUntil } from '@agent-platform/testkit';
import { describe, expect, it } from 'vitest';
import { consumeWorkflowSteps } from './workflow-step-handler.ts';

// The consumer of `workflow.steps` over the real embedded bus, with an executor scripted per test:
// a step's checkpoint may hand back the run's next step (docs/workflows.md "How a run executes",
// step 5), which runs here next; if it cannot, it goes to the bus for any worker.
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });
const step = (key: string): WorkflowStepMessage => ({ run_id: 'run-1', step_key: key, dispatch: 1 });
const continuation = (key: string): StepContinuation => ({
  message: step(key),
  entry: { key, index: Number(key[0]), iteration: 0, attempt: 1, dispatch: 1, dispatched_at: new Date().toISOString(), due_at: new Date().toISOString(), input: '', lease: null } as never,
  run: { id: 'run-1', left_by: key } as never,
});

async function consume(script: (message: WorkflowStepMessage) => Promise<StepContinuation | null>, continueWithinMs?: number) {
  const bus = createEmbeddedBus();
  const handled: string[] = [];
  const handedOff: string[] = [];
  /** The run each handled step was given to look ahead in (a continuation's), or null (read by the executor). */
  const known: Array<string | null> = [];
  const executor: StepExecutor = {
    handle: async (message, run) => {
      handled.push(message.step_key);
      known.push((run as { left_by?: string } | undefined)?.left_by ?? null);
      return script(message);
    },
    handOff: async (c) => void handedOff.push(c.message.step_key),
    cancelRun: () => 0,
  };
  const subscription = await consumeWorkflowSteps({ bus, executor, logger, concurrency: 1, ...(continueWithinMs === undefined ? {} : { continueWithinMs }) });
  await bus.publish(Streams.workflowSteps, { id: 'run-1:0.0:1:1', correlation_id: 'run-1', attempt: 1, occurred_at: new Date().toISOString(), data: step('0.0') });
  return { bus, subscription, handled, handedOff, known };
}

describe('the workflow step consumer', () => {
  it('runs the steps a checkpoint hands back, one after the other, without publishing them', async () => {
    const { bus, subscription, handled, handedOff, known } = await consume(async (m) => (m.step_key === '0.0' ? continuation('1.0') : m.step_key === '1.0' ? continuation('2.0') : null));
    await waitUntil(() => handled.length === 3, { timeoutMs: 5_000 });
    expect(handled).toEqual(['0.0', '1.0', '2.0']);
    // A continued step gets the run its checkpoint left: the executor need not read it again.
    expect(known).toEqual([null, '1.0', '2.0']);
    expect(handedOff).toEqual([]);
    await subscription.drain();
    await bus.close();
  });

  it('hands a next step that failed here to the fleet, and acknowledges the step that ran', async () => {
    const { bus, subscription, handled, handedOff } = await consume(async (m) => {
      if (m.step_key === '1.0') throw new Error('connection to the store lost');
      return continuation('1.0');
    });
    await waitUntil(() => handedOff.length === 1, { timeoutMs: 5_000 });
    expect(handedOff).toEqual(['1.0']);
    // The message of 0.0 is not delivered again: its step ran and was acknowledged.
    await new Promise((r) => setTimeout(r, 700));
    expect(handled).toEqual(['0.0', '1.0']);
    await subscription.drain();
    await bus.close();
  });

  it('publishes the next step once its message was handled for too long, so the message is acknowledged', async () => {
    const slow = async (m: WorkflowStepMessage) => {
      await new Promise((r) => setTimeout(r, 60));
      return continuation(`${Number(m.step_key[0]) + 1}.0`);
    };
    const { bus, subscription, handled, handedOff } = await consume(slow, 100);
    await waitUntil(() => handedOff.length === 1, { timeoutMs: 5_000 });
    // 0.0 (60 ms), 1.0 (120 ms): past 100 ms, 2.0 goes to the bus instead of running here.
    expect(handled).toEqual(['0.0', '1.0']);
    expect(handedOff).toEqual(['2.0']);
    await subscription.drain();
    await bus.close();
  });
});
