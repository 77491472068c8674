import { TERMINAL_RUN_STATES } from '@agent-platform/contracts';
import type { Collection } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { ToolCallEntry, ToolCallJournal } from '../tools/tool-call-journal.ts';
import { journalOf, type WorkflowRunRecord } from './run-record.ts';
import { transitionRun } from './run-transition.ts';

/** The step execution a journal writes to: the run, the step key and the claim's lease token. */
export interface JournaledStep {
  runId: string;
  key: string;
  token: string;
}

/**
 * The tool-call journal of a workflow step (docs/tools.md "The tool-call journal"), kept in the
 * run document on the pending step (`journal`), so it outlives the worker and every attempt of
 * the step: each write is one versioned write of the run, fenced by the step's lease token, so a
 * worker that lost the step can neither journal a call (and then does not make it) nor record an
 * answer over its successor's. The key of position `n` is `<run>:<step key>:<n>` for every
 * execution of the step, so a repeat reaches the system of record under the original's key.
 */
export function createStepJournal(
  runs: Collection<WorkflowRunRecord>,
  step: JournaledStep,
  prior: ToolCallEntry[],
  context: { now: () => Date; redispatchAfterMs: number; changed?: () => void },
): ToolCallJournal {
  // No `lapsed`: whoever took the step over (claim or sweep) audited those already.
  return {
    prior,
    scope: { run_id: step.runId, step_key: step.key },
    keyOf: (n) => `${step.runId}:${step.key}:${n}`,
    async write(entry) {
      const done = await transitionRun(runs, step.runId, context, (draft) => {
        const pending = draft.pending[step.key];
        if (TERMINAL_RUN_STATES.has(draft.state) || pending?.lease?.token !== step.token) return null;
        const journal = [...journalOf(pending)];
        journal[entry.position] = entry;
        pending.journal = journal;
        delete pending.unconfirmed_writes;
        return true;
      });
      if (done === null) {
        const what = entry.state === 'started' ? 'was not called' : `ended '${entry.state}' but that could not be recorded`;
        throw Errors.invocationCancelled(`the step is no longer this worker's (the run was cancelled, ended or taken over): '${entry.tool}' ${what}`);
      }
      // The run's event streams show the call as it goes (docs/workflows.md "Run events").
      context.changed?.();
    },
  };
}
