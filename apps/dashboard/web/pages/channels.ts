import type { AgentList, ChannelDetail } from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { actionButton, fill, h } from '../lib/dom.ts';
import { statusText, statusWords } from '../lib/format.ts';
import { badge, dataTable, toneOf } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, pageHeader, refreshButton } from './common.ts';

const STATUS_POLL_MS = 3_000;

/** docs/channels.md: each channel's status and where its messages go; enable and disable for ChannelManage. */
export const channelsPage: Page = {
  path: 'channels',
  title: 'Channels',
  needs: ['ChannelRead'],
  async render(context) {
    const body = h('div');
    let shown = '';
    const load = async (): Promise<void> => {
      try {
        const [{ channels }, agents] = await Promise.all([
          context.api.get<{ channels: ChannelDetail[] }>('/channels', context.signal),
          context.api.get<AgentList>('/agents', context.signal).catch(() => ({ agents: [] })),
        ]);
        // Redrawn only when something changed, so a periodic look never moves the keyboard focus.
        const seen = JSON.stringify([channels, agents.agents]);
        if (seen === shown) return;
        shown = seen;
        const names = new Map(agents.agents.map((a) => [a.id, a.name]));
        fill(body, table(context, channels, names, load));
      } catch (error) {
        shown = '';
        fill(body, errorBox(describeError(error)));
      }
    };
    fill(
      context.root,
      pageHeader('Channels', refreshButton('Refresh channels', load)),
      h(
        'p',
        { class: 'lead' },
        'Messaging channels bridged to agents and workflows, and whether each is connected. Statuses are looked at again every few seconds.',
      ),
      body,
    );
    await load();
    watch(context.signal, load);
  },
};

/** A channel's status moves on its own (a bridge opens the adapter, a peer goes down): look again while the page is open. */
function watch(signal: AbortSignal, load: () => Promise<void>): void {
  const timer = setInterval(() => void load(), STATUS_POLL_MS);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}

function table(
  context: PageContext,
  channels: ChannelDetail[],
  agents: Map<string, string>,
  reload: () => Promise<void>,
): HTMLElement {
  const mayManage = context.session.can('ChannelManage');
  const toggle = (channel: ChannelDetail) => async (): Promise<void> => {
    const verb = channel.enabled ? 'disable' : 'enable';
    try {
      await context.api.post(`/channels/${encodeURIComponent(channel.id)}/${verb}`);
      context.announce(`Channel ${channel.id} ${verb}d.`);
      await reload();
    } catch (error) {
      context.announce(`Could not ${verb} channel ${channel.id}: ${describeError(error)}`, 'error');
    }
  };
  return dataTable<ChannelDetail>(
    `${channels.length} channel${channels.length === 1 ? '' : 's'}`,
    [
      { header: 'Channel', rowHeader: true, cell: (c) => h('span', { class: 'name' }, c.id) },
      { header: 'Kind', cell: (c) => c.kind },
      { header: 'Status', cell: (c) => badge(statusWords(c.status), toneOf(statusText(c.status))) },
      { header: 'Enabled', cell: (c) => (c.enabled ? 'yes' : 'no') },
      {
        header: 'Delivers to',
        cell: (c) =>
          c.default_workflow !== null
            ? `workflow ${c.default_workflow}`
            : c.default_agent !== null
              ? `agent ${agents.get(c.default_agent) ?? c.default_agent}`
              : '—',
      },
      ...(mayManage
        ? [
            {
              header: 'Actions',
              cell: (c: ChannelDetail) =>
                actionButton(
                  c.enabled ? 'Disable' : 'Enable',
                  `${c.enabled ? 'Disable' : 'Enable'} channel ${c.id}`,
                  toggle(c),
                  c.enabled ? 'secondary' : 'primary',
                ),
            },
          ]
        : []),
    ],
    channels,
    'No channels. Create one with POST /channels (docs/channels.md).',
  );
}
