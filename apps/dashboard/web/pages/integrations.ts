import type {
  ConnectorHealthList,
  ContractBindingList,
  IntegrationInfo,
  IntegrationList,
} from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { actionButton, fill, h } from '../lib/dom.ts';
import { formatTime, statusText, statusWords } from '../lib/format.ts';
import { badge, dataTable, toneOf, stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, pageHeader, refreshButton, section } from './common.ts';

/**
 * docs/integrations.md and docs/connectors.md: the installed integrations (tool servers) with
 * their fleet status, the six connectors' health probed now, and which integration serves each
 * contract. Connect, disconnect and reconnect for IntegrationManage.
 */
export const integrationsPage: Page = {
  path: 'integrations',
  title: 'Integrations',
  needs: ['IntegrationRead'],
  async render(context) {
    const integrations = h('div');
    const connectors = h('div');
    const bindings = h('div');
    const loadIntegrations = async (): Promise<void> => {
      try {
        const [list, bound] = await Promise.all([
          context.api.get<IntegrationList>('/integrations', context.signal),
          context.api.get<ContractBindingList>('/contracts', context.signal),
        ]);
        fill(integrations, integrationTable(context, list.integrations, loadIntegrations));
        fill(
          bindings,
          dataTable(
            `${bound.bindings.length} contract binding${bound.bindings.length === 1 ? '' : 's'}`,
            [
              { header: 'Contract', rowHeader: true, cell: (b) => b.contract },
              { header: 'Served by', cell: (b) => b.integration_id },
              { header: 'Bound', cell: (b) => formatTime(b.bound_at) },
              { header: 'By', cell: (b) => b.bound_by },
            ],
            bound.bindings,
            'No contract is bound: bindings appear when an agent equips a competency that needs a contract.',
          ),
        );
      } catch (error) {
        fill(integrations, errorBox(describeError(error)));
      }
    };
    const loadConnectors = async (asked = false): Promise<void> => {
      fill(connectors, h('p', { class: 'muted' }, 'Probing the connectors…'));
      try {
        const health = await context.api.get<ConnectorHealthList>('/connectors/health', context.signal);
        fill(
          connectors,
          dataTable(
            'Connector health, probed just now',
            [
              { header: 'Connector', rowHeader: true, cell: (c) => c.name },
              {
                header: 'Status',
                // Not configured is not a failure: nothing was probed (and an integration may still be running).
                cell: (c) => (c.status === 'NotConfigured' ? badge('Not probed', 'neutral') : stateBadge(c.status)),
              },
              {
                header: 'Latency',
                numeric: true,
                cell: (c) => (c.latency_ms === null ? '—' : `${c.latency_ms} ms`),
              },
              {
                header: 'Error',
                cell: (c) => (c.status === 'NotConfigured' ? 'no health URL in [connectors] urls' : (c.error ?? '')),
              },
            ],
            health.connectors,
            'No connectors.',
          ),
        );
        // Said only when the person asked: the page load is announced by its heading.
        if (asked) context.announce('Connector health updated.');
      } catch (error) {
        fill(connectors, errorBox(describeError(error)));
      }
    };
    fill(
      context.root,
      pageHeader('Integrations', refreshButton('Refresh integrations', loadIntegrations)),
      section('Integrations', integrations),
      section(
        'Connector health',
        h(
          'p',
          { class: 'lead' },
          'Whether the systems of record the agents depend on answer from where the platform runs, probed at the health URLs of [connectors] urls in the config. These probes are not the integrations above: an integration can be running (its tool server connected) while the probe of the system behind it is not configured, and the other way round.',
        ),
        h(
          'div',
          { class: 'toolbar' },
          actionButton('Check again', 'Check connector health again', () => loadConnectors(true)),
        ),
        connectors,
      ),
      section('Contract bindings', bindings),
    );
    await Promise.all([loadIntegrations(), loadConnectors()]);
  },
};

function integrationTable(
  context: PageContext,
  integrations: IntegrationInfo[],
  reload: () => Promise<void>,
): HTMLElement {
  const mayManage = context.session.can('IntegrationManage');
  const act =
    (integration: IntegrationInfo, verb: 'connect' | 'disconnect' | 'reconnect') =>
    async (): Promise<void> => {
      try {
        await context.api.post(`/integrations/${encodeURIComponent(integration.id)}/${verb}`);
        context.announce(`${integration.name}: ${verb} done.`);
        await reload();
      } catch (error) {
        context.announce(`Could not ${verb} ${integration.name}: ${describeError(error)}`, 'error');
      }
    };
  return dataTable<IntegrationInfo>(
    `${integrations.length} integration${integrations.length === 1 ? '' : 's'}`,
    [
      {
        header: 'Integration',
        rowHeader: true,
        cell: (i) =>
          h('span', null, h('span', { class: 'name' }, i.name), h('span', { class: 'sub' }, i.description)),
      },
      { header: 'Version', cell: (i) => i.version },
      { header: 'Transport', cell: (i) => i.transport },
      { header: 'Status', cell: (i) => badge(statusWords(i.status), toneOf(statusText(i.status))) },
      ...(!mayManage
        ? []
        : [
            {
              header: 'Actions',
              cell: (i: IntegrationInfo) => {
                const running = statusText(i.status) === 'Running';
                return h(
                  'div',
                  { class: 'button-row' },
                  running
                    ? actionButton('Reconnect', `Reconnect ${i.name}`, act(i, 'reconnect'))
                    : actionButton('Connect', `Connect ${i.name}`, act(i, 'connect'), 'primary'),
                  running
                    ? actionButton('Disconnect', `Disconnect ${i.name}`, act(i, 'disconnect'), 'danger')
                    : null,
                );
              },
            },
          ]),
    ],
    integrations,
    'No integrations are installed.',
  );
}
