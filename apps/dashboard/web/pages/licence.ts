import type {
  LicenceStatus,
  LoadedLicenceStatus,
  UsageSummary,
  UsageView,
  ValueEvents,
} from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { fill, h } from '../lib/dom.ts';
import { barChart, budgetMeter } from '../lib/chart.ts';
import { formatDay, formatNumber, formatTime, formatUsd } from '../lib/format.ts';
import { badge, dataTable, stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, facts, notAllowed, pageHeader, section } from './common.ts';

const WEEKS = 12;

/**
 * docs/licence.md and docs/usage.md: what the licence allows and how much of it is used
 * (transactions per workflow type, cloud and provider spend), token usage for the period and
 * all time, and value events week by week (the time series the api keeps).
 */
export const licencePage: Page = {
  path: 'licence',
  title: 'Licence and usage',
  needs: ['LicenceRead', 'BudgetRead'],
  async render(context) {
    fill(
      context.root,
      pageHeader('Licence and usage'),
      context.session.can('LicenceRead') ? await licenceSection(context) : null,
      context.session.can('BudgetRead')
        ? await usageSections(context)
        : section('Usage', notAllowed('Reading usage', context.config.permissions.BudgetRead)),
    );
  },
};

async function licenceSection(context: PageContext): Promise<HTMLElement> {
  let status: LicenceStatus;
  try {
    status = await context.api.get<LicenceStatus>('/licence/status', context.signal);
  } catch (error) {
    return section('Licence', errorBox(describeError(error)));
  }
  if (status.status === 'no_licence') {
    return section(
      'Licence',
      h('p', { class: 'notice error', role: 'alert' }, badge('no licence', 'bad'), ` ${status.message}`),
    );
  }
  const licence: LoadedLicenceStatus = status;
  const types = Object.entries(licence.transaction_utilization);
  return section(
    'Licence',
    facts([
      ['Carrier', `${licence.carrier_name} (${licence.carrier_id})`],
      ['Status', stateBadge(licence.status)],
      [
        'Expires',
        `${formatTime(licence.expires_at)} — ${licence.days_remaining} day${licence.days_remaining === 1 ? '' : 's'} left`,
      ],
      ['Budget period', `${formatTime(licence.period_start)} to ${formatTime(licence.period_end)}`],
      [
        'Providers',
        Object.entries(licence.providers)
          .map(([name, on]) => `${name.replace('_', ' ')}: ${on ? 'yes' : 'no'}`)
          .join(', '),
      ],
    ]),
    h('h3', null, 'Transactions this period'),
    types.length === 0
      ? h('p', { class: 'muted' }, 'No workflow type has a budget or any use yet.')
      : h(
          'div',
          { class: 'meters' },
          ...types.map(([type, u]) => budgetMeter(type, u.used, u.budget, formatNumber)),
        ),
    h('h3', null, 'Spend this period'),
    h(
      'div',
      { class: 'meters' },
      licence.cloud_spend === null
        ? h('p', { class: 'muted' }, 'No managed-cloud spend is provisioned.')
        : budgetMeter(
            'Managed cloud',
            licence.cloud_spend.spent_usd,
            licence.cloud_spend.budget_usd,
            formatUsd,
          ),
      ...licence.provider_entitlements.map((p) =>
        budgetMeter(`Provider ${p.provider_id}`, p.spent_usd, p.budget_usd, formatUsd),
      ),
    ),
  );
}

async function usageSections(context: PageContext): Promise<HTMLElement[]> {
  try {
    const [period, total, value] = await Promise.all([
      context.api.get<UsageView>('/usage', context.signal),
      context.api.get<UsageSummary>('/usage/summary', context.signal),
      context.api.get<ValueEvents>(
        `/usage/value-events?weeks=${WEEKS}&window=${WEEKS * 7 * 86_400}`,
        context.signal,
      ),
    ]);
    const usage = dataTable<readonly [string, number, number, number, number]>(
      'Model usage',
      [
        { header: 'Span', rowHeader: true, cell: (r) => r[0] },
        { header: 'Model calls', numeric: true, cell: (r) => formatNumber(r[1]) },
        { header: 'Input tokens', numeric: true, cell: (r) => formatNumber(r[2]) },
        { header: 'Output tokens', numeric: true, cell: (r) => formatNumber(r[3]) },
        { header: 'Cost', numeric: true, cell: (r) => formatUsd(r[4]) },
      ],
      [
        [
          'This licence period',
          period.total_requests,
          period.total_input_tokens,
          period.total_output_tokens,
          period.total_cost_usd,
        ],
        ['All time', total.requests, total.input_tokens, total.output_tokens, total.cost_usd],
      ],
      'No usage.',
    );
    const solutions = Object.entries(value.by_solution).sort((a, b) => b[1] - a[1]);
    return [
      section('Usage', usage),
      section(
        'Value events',
        h(
          'p',
          { class: 'lead' },
          `Units of business work (a workflow type's invocation or run that finished) over the last ${WEEKS} weeks: ${formatNumber(value.total)} in all.`,
        ),
        barChart(
          `Value events per week, last ${WEEKS} weeks`,
          value.weekly.map((w) => ({ label: formatDay(w.week_start), value: w.count })),
          'value events',
        ),
        h(
          'div',
          { class: 'columns' },
          dataTable<[string, number]>(
            'By class',
            [
              { header: 'Class', rowHeader: true, cell: (r) => r[0] },
              { header: 'Events', numeric: true, cell: (r) => formatNumber(r[1]) },
            ],
            Object.entries(value.by_class),
            'None.',
          ),
          dataTable<[string, number]>(
            'By solution',
            [
              { header: 'Workflow type', rowHeader: true, cell: (r) => r[0] },
              { header: 'Events', numeric: true, cell: (r) => formatNumber(r[1]) },
            ],
            solutions,
            'None yet.',
          ),
        ),
      ),
    ];
  } catch (error) {
    return [section('Usage', errorBox(describeError(error)))];
  }
}
