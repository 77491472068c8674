import { TERMINAL_RUN_STATES } from '@agent-platform/contracts';
import type { Collection } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { ToolCallJournal } from '../invocation/invocation-types.ts';
import type { WorkflowRunRecord } from './run-record.ts';
import { transitionRun } from './run-transition.ts';

/** The step execution a journal writes to: the run, the step key and the claim's lease token. */
export interface JournaledStep {
  runId: string;
  key: string;
  token: string;
}

/**
 * The spec's `Escalated` rule (docs/tools.md "Escalated"): before a state-changing tool call the
 * call is added to the step's `unconfirmed_writes` in the run document, one fenced write, and
 * removed once its outcome is known. A worker that dies between the two leaves the call in the
 * document; whoever takes the lapsed step over finds it and escalates the run instead of running
 * the step again (run-planner `escalateIfUnsafe`). The idempotency key `<run>:<step key>:<n>`
 * counts the step's journaled calls over all its attempts, so a retry never reuses a key.
 */
export function createStepJournal(
  runs: Collection<WorkflowRunRecord>,
  step: JournaledStep,
  context: { holder: string; now: () => Date; redispatchAfterMs: number },
): ToolCallJournal {
  const options = { now: context.now, redispatchAfterMs: context.redispatchAfterMs };
  const ours = (draft: WorkflowRunRecord) => {
    const entry = draft.pending[step.key];
    return !TERMINAL_RUN_STATES.has(draft.state) && entry?.lease?.token === step.token ? entry : null;
  };
  return {
    async begin(intent) {
      const done = await transitionRun(runs, step.runId, options, (draft) => {
        const entry = ours(draft);
        if (entry === null) return null;
        const index = entry.write_calls ?? 0;
        entry.write_calls = index + 1;
        const call = { ...intent, idempotency_key: `${draft.id}:${step.key}:${index}`, at: context.now().toISOString(), worker: context.holder };
        entry.unconfirmed_writes.push(call);
        return call;
      });
      if (done === null) throw Errors.invocationCancelled(`the step is no longer this worker's (the run was cancelled, ended or taken over): '${intent.tool}' was not called`);
      return done.result;
    },
    async confirm(call) {
      await transitionRun(runs, step.runId, options, (draft) => {
        const entry = ours(draft);
        if (entry === null) return null;
        entry.unconfirmed_writes = entry.unconfirmed_writes.filter((c) => c.idempotency_key !== call.idempotency_key);
        return true;
      });
    },
  };
}
