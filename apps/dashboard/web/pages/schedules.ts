import type { AgentList, CronJob, CronJobList, ScheduleFireList } from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { actionButton, h } from '../lib/dom.ts';
import { formatDuration, formatNumber, formatTime } from '../lib/format.ts';
import { badge, dataTable, stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { tablePage } from './common.ts';

/** Recent fires shown per job; the whole log is GET /schedules/{id}/fires. */
const FIRES_SHOWN = 5;

type Row = CronJob & { agent: string; log: ScheduleFireList | null };

function when(job: CronJob): string {
  const schedule = job.schedule;
  if (schedule.kind === 'cron')
    return `${schedule.expr}${schedule.tz === null ? ' (UTC)' : ` (${schedule.tz})`}`;
  if (schedule.kind === 'every') return `every ${formatDuration(schedule.every_secs * 1000)}`;
  return `once at ${formatTime(schedule.at)}`;
}

async function loadRows(context: PageContext): Promise<Row[]> {
  const [{ jobs }, { agents }] = await Promise.all([
    context.api.get<CronJobList>('/cron/jobs', context.signal),
    context.api.get<AgentList>('/agents', context.signal),
  ]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  return Promise.all(
    jobs.map(async (job) => ({
      ...job,
      agent: names.get(job.agent_id) ?? job.agent_id,
      log: await context.api
        .get<ScheduleFireList>(`/schedules/${job.id}/fires?limit=${FIRES_SHOWN}`, context.signal)
        .catch(() => null),
    })),
  );
}

/**
 * docs/schedules.md: every job with its next and last fire, its missed slots and the outcome of
 * its latest fires; pause and resume for the roles with ScheduleUpdate.
 */
export const schedulesPage: Page = {
  path: 'schedules',
  title: 'Schedules',
  needs: ['AgentList'],
  render: tablePage({
    title: 'Schedules',
    lead: 'Cron jobs and schedules of every agent: when each fires next, when it last fired, and the slots that never fired.',
    rows: loadRows,
    table,
  }),
};

function table(context: PageContext, rows: Row[], reload: () => Promise<void>): HTMLElement {
  const mayToggle = context.session.can('ScheduleUpdate');
  const toggle = (row: Row) => async (): Promise<void> => {
    const verb = row.enabled ? 'pause' : 'resume';
    try {
      await context.api.post(`/schedules/${row.id}/${verb}`);
      context.announce(`Schedule of ${row.agent} ${row.enabled ? 'paused' : 'resumed'}.`);
      await reload();
    } catch (error) {
      context.announce(`Could not ${verb} the schedule: ${describeError(error)}`, 'error');
    }
  };
  return dataTable<Row>(
    `${rows.length} schedule${rows.length === 1 ? '' : 's'}`,
    [
      {
        header: 'Agent',
        rowHeader: true,
        cell: (r) =>
          h(
            'span',
            null,
            h('span', { class: 'name' }, r.agent),
            h(
              'span',
              { class: 'sub' },
              r.action.message.length > 60 ? `${r.action.message.slice(0, 59)}…` : r.action.message,
            ),
          ),
      },
      { header: 'When', cell: (r) => h('span', { class: 'mono' }, when(r)) },
      { header: 'State', cell: (r) => badge(r.enabled ? 'enabled' : 'paused', r.enabled ? 'ok' : 'warn') },
      { header: 'Next fire', cell: (r) => formatTime(r.next_run) },
      { header: 'Last fire', cell: (r) => formatTime(r.last_run) },
      {
        header: 'Missed slots',
        numeric: true,
        cell: (r) => (r.log === null ? '—' : missed(r.log.missed_slots)),
      },
      { header: 'Recent fires', cell: (r) => fires(r) },
      ...(mayToggle
        ? [
            {
              header: 'Actions',
              cell: (r: Row) =>
                actionButton(
                  r.enabled ? 'Pause' : 'Resume',
                  `${r.enabled ? 'Pause' : 'Resume'} the schedule of ${r.agent}`,
                  toggle(r),
                  r.enabled ? 'secondary' : 'primary',
                ),
            },
          ]
        : []),
    ],
    rows,
    'No schedules. Create one with POST /agents/{id}/schedules or POST /cron/jobs.',
  );
}

function missed(count: number): HTMLElement | string {
  return count === 0 ? '0' : badge(formatNumber(count), 'bad');
}

function fires(row: Row): HTMLElement | string {
  const list = row.log?.fires ?? [];
  if (list.length === 0) return 'none yet';
  const latest = list[0]!;
  return h(
    'details',
    null,
    h(
      'summary',
      { 'aria-label': `Recent fires of ${row.agent}: latest ${latest.outcome}` },
      stateBadge(latest.outcome),
      ` ${formatTime(latest.slot_at)}`,
    ),
    h(
      'ul',
      { class: 'fires' },
      ...list.map((fire) =>
        h(
          'li',
          null,
          stateBadge(fire.outcome),
          ` ${formatTime(fire.slot_at)}`,
          fire.trigger === 'manual' ? ' (run by hand)' : '',
          fire.missed_count > 0
            ? ` — ${fire.missed_count} slots missed until ${formatTime(fire.missed_until)}`
            : '',
          fire.reason === null ? '' : h('span', { class: 'sub' }, fire.reason),
        ),
      ),
    ),
  );
}
