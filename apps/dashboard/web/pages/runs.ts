import type {
  RunList,
  WorkflowDefinitionView,
  WorkflowList,
  WorkflowRunStatus,
} from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { field, fill, h, select } from '../lib/dom.ts';
import { clip, formatDuration, formatTime } from '../lib/format.ts';
import { dataTable, stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, pageHeader, refreshButton, section } from './common.ts';

export const RUN_STATES = ['Pending', 'Running', 'Suspended', 'Completed', 'Failed', 'Escalated'] as const;
export const TERMINAL = new Set<string>(['Completed', 'Failed', 'Escalated']);

/** How long a run has been going (or went), for spotting stuck ones. */
function age(run: WorkflowRunStatus): string {
  const end = run.completed_at === null ? Date.now() : new Date(run.completed_at).getTime();
  return formatDuration(end - new Date(run.started_at).getTime());
}

/**
 * docs/workflows.md: runs newest first with a state filter (GET /runs?state=), a form to start
 * one (WorkflowRun roles), and each run's own page with live progress.
 */
export const runsPage: Page = {
  path: 'runs',
  title: 'Workflow runs',
  needs: ['WorkflowList'],
  async render(context) {
    const query = new URLSearchParams(location.search);
    const stateFilter = select(
      'state',
      [['', 'All states'], ...RUN_STATES.map((s) => [s, s] as const)],
      query.get('state') ?? '',
    );
    const list = h('div');
    const load = async (): Promise<void> => {
      const state = stateFilter.value;
      history.replaceState(
        null,
        '',
        state === '' ? location.pathname : `${location.pathname}?state=${state}`,
      );
      try {
        const { runs } = await context.api.get<RunList>(
          `/runs?limit=100${state === '' ? '' : `&state=${state}`}`,
          context.signal,
        );
        fill(list, runTable(runs, state));
      } catch (error) {
        fill(list, errorBox(describeError(error)));
      }
    };
    stateFilter.addEventListener('change', () => void load());
    const filter = h('div', { class: 'toolbar' }, field('Show runs in state', stateFilter));
    fill(
      context.root,
      pageHeader('Workflow runs', refreshButton('Refresh runs', load)),
      context.session.can('WorkflowRun') ? await startForm(context) : null,
      section('Runs', filter, list),
    );
    await load();
  },
};

function runTable(runs: WorkflowRunStatus[], state: string): HTMLElement {
  return dataTable<WorkflowRunStatus>(
    `${runs.length === 100 ? 'The newest 100' : runs.length} run${runs.length === 1 ? '' : 's'}${state === '' ? '' : ` in state ${state}`}`,
    [
      {
        header: 'Run',
        rowHeader: true,
        cell: (r) =>
          h(
            'a',
            { href: `/dashboard/runs/${r.id}` },
            h('span', { class: 'name nowrap' }, r.workflow_name),
            h('span', { class: 'sub mono' }, r.id.slice(0, 8)),
          ),
      },
      { header: 'State', cell: (r) => stateBadge(r.state) },
      { header: 'Started', cell: (r) => formatTime(r.started_at) },
      { header: 'Time', numeric: true, cell: (r) => age(r) },
      { header: 'Steps done', numeric: true, cell: (r) => r.step_results.length },
      { header: 'Input', cell: (r) => h('span', { class: 'clip' }, clip(r.input, 80)) },
      {
        header: 'Error',
        cell: (r) => (r.error === null ? '' : h('span', { class: 'clip' }, clip(r.error, 80))),
      },
    ],
    runs,
    state === '' ? 'No workflow has run yet.' : `No run is ${state}.`,
  );
}

/** POST /workflows/{id}/run from a form, then the run's live page. */
async function startForm(context: PageContext): Promise<HTMLElement> {
  let workflows: WorkflowDefinitionView[];
  try {
    workflows = (await context.api.get<WorkflowList>('/workflows', context.signal)).workflows;
  } catch (error) {
    return section('Start a run', errorBox(describeError(error)));
  }
  if (workflows.length === 0)
    return section('Start a run', h('p', { class: 'muted' }, 'No workflow is installed.'));
  const workflow = select(
    'workflow',
    workflows.map((w) => [w.id, w.name] as const),
  );
  const input = h('textarea', { name: 'input', rows: 3, required: true });
  const status = h('div', { class: 'form-status' });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Start run');
  const form = h(
    'form',
    { class: 'stack' },
    field('Workflow', workflow),
    field('Input', input, 'The text the first step receives as {{input}}.'),
    h('div', { class: 'form-actions' }, submit),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    void context.api
      .post<WorkflowRunStatus>(`/workflows/${workflow.value}/run`, { input: input.value })
      .then((run) => {
        context.announce(`Run of ${run.workflow_name} started.`);
        context.navigate(`/dashboard/runs/${run.id}`);
      })
      .catch((error: unknown) => fill(status, errorBox(`The run was not started: ${describeError(error)}`)))
      .finally(() => (submit.disabled = false));
  });
  return section('Start a run', form);
}
