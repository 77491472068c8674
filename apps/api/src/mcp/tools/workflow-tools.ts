import type { GetRunInput, RunWorkflowInput, WorkflowDefinitionView } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import type { ApiDeps } from '../../deps.ts';
import { waitForRunEnd } from '../run-wait.ts';
import { UUID, type ToolHandler } from '../tool-context.ts';

/**
 * A wait ends this long before `[server] request_timeout_secs`, so that the tool answers with the
 * run (still Running) rather than the request being cut off with 408.
 */
const TIMEOUT_MARGIN_SECS = 2;

/**
 * run_workflow: POST /workflows/{id}/run with the workflow named by id or name, the
 * `idempotency_key` in the role of the Idempotency-Key header and the same `business_key`, then (with `wait_secs`) the wait
 * a client of the HTTP route does by polling GET /runs/{id}.
 */
export const runWorkflow: ToolHandler<RunWorkflowInput> = async ({ deps, caller, signal }, args, note) => {
  const workflow = await workflowByIdOrName(deps, args.workflow);
  note.target = `/workflows/${workflow.id}/run`;
  note.metadata.workflow_id = workflow.id;
  const { run, replayed } = await deps.workflows.start(
    workflow.id,
    { input: args.input, idempotencyKey: args.idempotency_key, businessKey: args.business_key },
    { identity: caller.identity },
  );
  note.metadata.run_id = run.id;
  if (run.business_key !== undefined) note.metadata.business_key = run.business_key;
  if (replayed) note.metadata.replayed = true;
  const waitSecs = Math.min(
    args.wait_secs ?? 0,
    deps.config.current().server.request_timeout_secs - TIMEOUT_MARGIN_SECS,
  );
  return waitSecs > 0 ? waitForRunEnd(deps, run.id, waitSecs * 1000, signal) : run;
};

/** get_run: GET /runs/{id}. */
export const getRun: ToolHandler<GetRunInput> = async ({ deps }, { run_id }) =>
  deps.workflows.run(run_id.toLowerCase());

async function workflowByIdOrName(
  deps: Pick<ApiDeps, 'workflows'>,
  ref: string,
): Promise<WorkflowDefinitionView> {
  if (UUID.test(ref)) return deps.workflows.get(ref.toLowerCase());
  const found = (await deps.workflows.list()).find((workflow) => workflow.name === ref);
  if (found === undefined) throw Errors.notFound('workflow', ref);
  return found;
}
