import type { AgentList, AgentStatusView, AgentSummary } from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { actionButton, h } from '../lib/dom.ts';
import { formatDuration, formatNumber } from '../lib/format.ts';
import { dataTable, stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { tablePage } from './common.ts';

type Row = AgentSummary & { status: AgentStatusView | null };

async function loadRows(context: PageContext): Promise<Row[]> {
  const { agents } = await context.api.get<AgentList>('/agents', context.signal);
  // GET /agents has no counters; one GET /agents/{id} each, concurrently.
  return Promise.all(
    agents.map(async (agent) => ({
      ...agent,
      status: await context.api.get<AgentStatusView>(`/agents/${agent.id}`, context.signal).catch(() => null),
    })),
  );
}

/**
 * Spec §Agent status: state, uptime, tasks and invocation counters; activate and suspend
 * (AgentStart/AgentStop, admin and operator) only for the roles allowed to. The server checks again.
 */
export const agentsPage: Page = {
  path: 'agents',
  title: 'Agents',
  needs: ['AgentList'],
  render: tablePage({
    title: 'Agents',
    lead: 'Every installed agent, its state and what it has done since the platform started counting.',
    rows: loadRows,
    table,
  }),
};

function table(context: PageContext, rows: Row[], reload: () => Promise<void>): HTMLElement {
  const mayStart = context.session.can('AgentStart');
  const mayStop = context.session.can('AgentStop');
  const act = (agent: Row, verb: 'activate' | 'suspend') => async (): Promise<void> => {
    try {
      await context.api.post(`/agents/${agent.id}/${verb}`);
      context.announce(`${agent.name} ${verb === 'activate' ? 'activated' : 'suspended'}.`);
      await reload();
    } catch (error) {
      context.announce(`Could not ${verb} ${agent.name}: ${describeError(error)}`, 'error');
    }
  };
  return dataTable<Row>(
    `${rows.length} agent${rows.length === 1 ? '' : 's'}`,
    [
      {
        header: 'Agent',
        rowHeader: true,
        cell: (a) =>
          h(
            'span',
            null,
            h('span', { class: 'name' }, a.title ?? a.name),
            a.title === null ? null : h('span', { class: 'sub' }, a.name),
          ),
      },
      { header: 'State', cell: (a) => stateBadge(a.state) },
      {
        header: 'Uptime',
        numeric: true,
        cell: (a) => (a.state === 'Running' ? formatDuration(a.status?.uptime) : '—'),
      },
      { header: 'Tasks received', numeric: true, cell: (a) => formatNumber(a.status?.tasks_received) },
      { header: 'Tasks completed', numeric: true, cell: (a) => formatNumber(a.status?.tasks_completed) },
      {
        header: 'Invocations',
        numeric: true,
        cell: (a) => formatNumber(a.status?.invocation_metrics.total_count),
      },
      {
        header: 'Errors',
        numeric: true,
        cell: (a) => formatNumber(a.status?.invocation_metrics.error_count),
      },
      {
        header: 'Average time',
        numeric: true,
        cell: (a) => formatDuration(a.status?.invocation_metrics.avg_duration_ms),
      },
      // The column is there only for a role that may use a button in it.
      ...(!mayStart && !mayStop
        ? []
        : [
            {
              header: 'Actions',
              cell: (a: Row) =>
                a.state === 'Running'
                  ? mayStop
                    ? actionButton('Suspend', `Suspend ${a.name}`, act(a, 'suspend'), 'danger')
                    : null
                  : mayStart
                    ? actionButton('Activate', `Activate ${a.name}`, act(a, 'activate'), 'primary')
                    : null,
            },
          ]),
    ],
    rows,
    'No agents are installed. Install an agent package (POST /catalog/install) to see it here.',
  );
}
