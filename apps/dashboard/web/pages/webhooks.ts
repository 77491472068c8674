import type { AgentList, Webhook, WebhookDelivery, WebhookDeliveryList, WebhookList, WebhookTestResult } from '@agent-platform/contracts';
import type { Api } from '../lib/api.ts';
import { describeError } from '../lib/api.ts';
import { actionButton, fill, h } from '../lib/dom.ts';
import { clip, formatNumber, formatTime } from '../lib/format.ts';
import { badge, dataTable } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, pageHeader, refreshButton, section } from './common.ts';

const DAY_MS = 24 * 3_600_000;
/** Dead letters read per webhook: enough to count a bad day, bounded for a page load. */
const DEAD_LETTERS_READ = 200;

/** A webhook and the events given up on for it in the last 24 hours (newest first). */
export interface WebhookHealth {
  webhook: Webhook;
  deadLetters: WebhookDelivery[];
}

/**
 * Every webhook with its dead-lettered deliveries of the last 24 hours: what the overview's
 * Needs attention panel counts and this page lists (docs/webhooks.md "Retries and dead letters").
 */
export async function webhookHealth(api: Api, signal: AbortSignal, now: number): Promise<WebhookHealth[]> {
  const { webhooks } = await api.get<WebhookList>('/webhooks', signal);
  return Promise.all(
    webhooks.map(async (webhook) => {
      const { deliveries } = await api.get<WebhookDeliveryList>(
        `/webhooks/${encodeURIComponent(webhook.id)}/deliveries?dead_letter=true&limit=${DEAD_LETTERS_READ}`,
        signal,
      );
      return { webhook, deadLetters: deliveries.filter((d) => now - Date.parse(d.at) <= DAY_MS) };
    }),
  );
}

/** docs/webhooks.md: each outbound webhook, the events given up on in the last day, and a test delivery for WebhookManage. */
export const webhooksPage: Page = {
  path: 'webhooks',
  title: 'Webhooks',
  needs: ['WebhookRead'],
  async render(context) {
    const body = h('div');
    const load = async (): Promise<void> => {
      try {
        const [health, agents] = await Promise.all([
          webhookHealth(context.api, context.signal, Date.now()),
          context.api.get<AgentList>('/agents', context.signal).catch(() => ({ agents: [] })),
        ]);
        const names = new Map(agents.agents.map((a) => [a.id, a.name]));
        fill(body, webhookTable(context, health, names), deadLetterTable(health));
      } catch (error) {
        fill(body, errorBox(describeError(error)));
      }
    };
    fill(
      context.root,
      pageHeader('Webhooks', refreshButton('Refresh webhooks', load)),
      h(
        'p',
        { class: 'lead' },
        'Outbound webhooks and the events they could not deliver. An event is retried with a growing wait; after its last attempt it is dead-lettered: given up on, and listed here for a day.',
      ),
      body,
    );
    await load();
  },
};

function webhookTable(context: PageContext, health: WebhookHealth[], agents: Map<string, string>): HTMLElement {
  const mayManage = context.session.can('WebhookManage');
  const test = (webhook: Webhook) => async (): Promise<void> => {
    try {
      const result = await context.api.post<WebhookTestResult>(`/webhooks/${encodeURIComponent(webhook.id)}/test`);
      if (result.delivered) context.announce(`Test delivered to ${webhook.url}: ${result.status_code} in ${result.latency_ms} ms.`);
      else context.announce(`Test not delivered to ${webhook.url}: ${result.error}`, 'error');
    } catch (error) {
      context.announce(`Could not test ${webhook.url}: ${describeError(error)}`, 'error');
    }
  };
  return dataTable<WebhookHealth>(
    `${health.length} webhook${health.length === 1 ? '' : 's'}`,
    [
      { header: 'URL', rowHeader: true, cell: ({ webhook }) => h('span', { class: 'name' }, webhook.url) },
      { header: 'Agent', cell: ({ webhook }) => agents.get(webhook.agent_id) ?? webhook.agent_id },
      {
        header: 'Dead letters (24 h)',
        numeric: true,
        cell: ({ deadLetters }) =>
          deadLetters.length === 0 ? badge('none', 'ok') : badge(formatNumber(deadLetters.length), 'bad'),
      },
      { header: 'Created', cell: ({ webhook }) => formatTime(webhook.created_at) },
      ...(mayManage
        ? [
            {
              header: 'Actions',
              cell: ({ webhook }: WebhookHealth) => actionButton('Send test', `Send a test delivery to ${webhook.url}`, test(webhook)),
            },
          ]
        : []),
    ],
    health,
    'No webhooks. Register one with POST /webhooks (docs/webhooks.md).',
  );
}

function deadLetterTable(health: WebhookHealth[]): HTMLElement {
  const rows = health
    .flatMap(({ webhook, deadLetters }) => deadLetters.map((delivery) => ({ webhook, delivery })))
    .sort((a, b) => Date.parse(b.delivery.at) - Date.parse(a.delivery.at));
  return section(
    'Dead-lettered deliveries',
    dataTable<{ webhook: Webhook; delivery: WebhookDelivery }>(
      `${rows.length} event${rows.length === 1 ? '' : 's'} given up on in the last 24 hours`,
      [
        { header: 'When', rowHeader: true, cell: ({ delivery }) => formatTime(delivery.at) },
        { header: 'Webhook', cell: ({ webhook }) => webhook.url },
        { header: 'Event', cell: ({ delivery }) => delivery.event_id ?? delivery.kind },
        { header: 'Attempts', numeric: true, cell: ({ delivery }) => formatNumber(delivery.attempt) },
        { header: 'Last error', cell: ({ delivery }) => clip(delivery.error ?? (delivery.status_code === null ? '' : `status ${delivery.status_code}`)) },
      ],
      rows,
      'No event was given up on in the last 24 hours.',
    ),
  );
}
