import type {
  RunToolCall,
  StepResultView,
  WorkflowDetailView,
  WorkflowRunStatus,
} from '@agent-platform/contracts';
import { ApiError, describeError } from '../lib/api.ts';
import { actionButton, fill, h, uid } from '../lib/dom.ts';
import { formatDuration, formatNumber, formatTime } from '../lib/format.ts';
import { readEventStream } from '../lib/sse.ts';
import { stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, facts, pageHeader, section } from './common.ts';
import { createToolCallsView } from './run-tool-calls.ts';
import { TERMINAL } from './runs.ts';

const RECONNECT_MS = 1_000;

/**
 * One run, live: the page follows GET /runs/{id}/events (docs/workflows.md "Run events": `run`,
 * then `step` per result, `state` per transition, `tool_call` per journal entry that appeared or
 * changed (docs/tools.md "The tool-call journal"), `end`), reconnecting if the stream drops
 * before the run ends (an api node restarted, a proxy timed out); the stream starts again with
 * the run as stored, so nothing is missed or counted twice.
 */
export const runDetailPage: Page = {
  path: 'runs/:id',
  title: 'Workflow run',
  needs: ['WorkflowStatus'],
  async render(context) {
    const runId = context.params[0] ?? '';
    let run: WorkflowRunStatus;
    try {
      run = await context.api.get<WorkflowRunStatus>(`/runs/${encodeURIComponent(runId)}`, context.signal);
    } catch (error) {
      fill(context.root, pageHeader('Workflow run'), errorBox(describeError(error)));
      return;
    }
    const definition = await context.api
      .get<WorkflowDetailView>(`/workflows/${run.workflow_id}`, context.signal)
      .catch(() => null);
    const view = createRunView(context, definition);
    view.show(run);
    void follow(context, runId, view);
  },
};

interface RunView {
  show(run: WorkflowRunStatus): void;
  step(result: StepResultView & { index: number }): void;
  state(state: string, error: string | null): void;
  toolCall(call: RunToolCall): void;
  live(text: string): void;
  /** The stream said `end`: the run is over, in the state shown. */
  ended(): void;
}

function createRunView(context: PageContext, definition: WorkflowDetailView | null): RunView {
  let current: WorkflowRunStatus | null = null;
  const planned = definition?.steps.length ?? 0;
  const heading = h('span');
  const factsBox = h('div');
  const progressLabelId = uid('progress');
  const progress = h('progress', { max: Math.max(planned, 1), value: 0, 'aria-labelledby': progressLabelId });
  const progressText = h('span', { id: progressLabelId });
  const liveText = h('p', { class: 'live-indicator', role: 'status' });
  const steps = h('ol', { class: 'steps' });
  const actions = h('div', { class: 'page-actions' });
  const toolCalls = createToolCallsView(context);

  const renderFacts = (): void => {
    if (current === null) return;
    const run = current;
    fill(heading, `Run of ${run.workflow_name}`);
    fill(
      factsBox,
      facts([
        ['State', stateBadge(run.state)],
        ['Run id', h('span', { class: 'mono' }, run.id)],
        ['Started', formatTime(run.started_at)],
        ['Finished', formatTime(run.completed_at)],
        ['Input', h('pre', { class: 'output' }, run.input)],
        ['Output', run.output === null ? '—' : h('pre', { class: 'output' }, run.output)],
        ['Error', run.error ?? '—'],
      ]),
    );
    const done = run.step_results.length;
    progress.max = Math.max(planned, done, 1);
    progress.value = TERMINAL.has(run.state) && run.state === 'Completed' ? progress.max : done;
    fill(
      progressText,
      planned > 0 ? `${done} of ${planned} planned steps finished` : `${done} steps finished`,
    );
    fill(
      actions,
      !TERMINAL.has(run.state) && context.session.can('WorkflowRun')
        ? actionButton('Cancel run', 'Cancel run', cancel, 'danger')
        : null,
    );
  };

  const cancel = async (): Promise<void> => {
    if (current === null) return;
    try {
      await context.api.post<WorkflowRunStatus>(`/runs/${current.id}/cancel`);
      context.announce('Cancel requested.');
    } catch (error) {
      context.announce(`The run was not cancelled: ${describeError(error)}`, 'error');
    }
  };

  // A Collect step calls no agent (docs/workflows.md "Step modes"): its result is the FanOut
  // group's outputs joined, not "0 ms, 0 tokens" of a call that never happened.
  const collects = new Set(
    (definition?.steps ?? [])
      .filter((step) => (typeof step.mode === 'string' ? step.mode : Object.keys(step.mode)[0]) === 'Collect')
      .map((step) => step.name),
  );
  const stepItem = (result: StepResultView, index: number): HTMLElement =>
    h(
      'li',
      { class: 'step' },
      h(
        'div',
        { class: 'step-head' },
        h('span', { class: 'name' }, `${index + 1}. ${result.step_name}`),
        collects.has(result.step_name)
          ? h(
              'span',
              { class: 'sub' },
              'collects the outputs of the steps run in parallel before it (no model call)',
            )
          : [
              h('span', { class: 'sub' }, `by ${result.agent_name}`),
              h(
                'span',
                { class: 'sub' },
                `${formatDuration(result.duration_ms)} · ${formatNumber(result.tokens_used)} tokens`,
              ),
            ],
      ),
      h(
        'details',
        null,
        h('summary', null, `Output of ${result.step_name}`),
        h('pre', { class: 'output' }, result.output),
      ),
    );

  const plan =
    definition === null
      ? null
      : section(
          'Plan',
          h(
            'ol',
            { class: 'plan' },
            ...definition.steps.map((step) =>
              h(
                'li',
                null,
                h('span', { class: 'name' }, step.name),
                h(
                  'span',
                  { class: 'sub' },
                  ` ${typeof step.mode === 'string' ? step.mode : (Object.keys(step.mode)[0] ?? '')} · agent ${'ByName' in step.agent ? step.agent.ByName : step.agent.ById}`,
                ),
              ),
            ),
          ),
        );

  fill(
    context.root,
    h('div', { class: 'page-header' }, h('h1', { id: 'page-title', tabindex: -1 }, heading), actions),
    h('p', null, h('a', { href: '/dashboard/runs' }, 'All runs')),
    toolCalls.escalation,
    section('Status', factsBox, h('div', { class: 'progress-row' }, progress, progressText), liveText),
    section('Steps', steps),
    toolCalls.journal,
    plan,
  );

  return {
    show(run) {
      current = run;
      fill(steps, ...run.step_results.map(stepItem));
      toolCalls.show(run);
      renderFacts();
    },
    step(result) {
      if (current === null || result.index < current.step_results.length) return;
      current = { ...current, step_results: [...current.step_results, result] };
      steps.append(stepItem(result, result.index));
      renderFacts();
      fill(
        liveText,
        `Live: step ${result.step_name} finished (${current.step_results.length}${planned > 0 ? ` of ${planned}` : ''}).`,
      );
    },
    state(state, error) {
      if (current === null) return;
      current = { ...current, state: state as WorkflowRunStatus['state'], error };
      renderFacts();
      fill(liveText, `Live: the run is ${state}${error === null ? '' : `: ${error}`}.`);
    },
    toolCall(call) {
      fill(liveText, toolCalls.update(call));
    },
    live(text) {
      fill(liveText, text);
    },
    ended() {
      fill(
        liveText,
        `The run has ended: ${current?.state ?? ''}${current?.error ? ` (${current.error})` : ''}.`,
      );
    },
  };
}

async function follow(context: PageContext, runId: string, view: RunView): Promise<void> {
  while (!context.signal.aborted) {
    let ended = false;
    try {
      const response = await context.api.fetch(`/runs/${encodeURIComponent(runId)}/events`, {
        headers: { accept: 'text/event-stream' },
        signal: context.signal,
      });
      view.live('Live: following the run as it happens.');
      await readEventStream(response.body!, (name, data) => {
        const payload = JSON.parse(data);
        if (name === 'run') view.show(payload);
        else if (name === 'step') view.step(payload);
        else if (name === 'state') view.state(payload.state, payload.error);
        else if (name === 'tool_call') view.toolCall(payload);
        else if (name === 'end') {
          ended = true;
          view.show(payload);
        }
      });
    } catch (error) {
      if (context.signal.aborted) return;
      if (error instanceof ApiError && error.status < 500) {
        view.live(`Live updates are not available: ${describeError(error)}`);
        return;
      }
      view.live(`Connection lost (${describeError(error)}); reconnecting…`);
    }
    if (ended) {
      view.ended();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}
