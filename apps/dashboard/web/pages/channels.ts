import type { AgentList, ChannelDetail } from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { actionButton, fill, h } from '../lib/dom.ts';
import { statusText } from '../lib/format.ts';
import { badge, dataTable, toneOf } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, pageHeader, refreshButton } from './common.ts';

/** docs/channels.md: each channel's status and where its messages go; enable and disable for ChannelManage. */
export const channelsPage: Page = {
  path: 'channels',
  title: 'Channels',
  needs: ['ChannelRead'],
  async render(context) {
    const body = h('div');
    const load = async (): Promise<void> => {
      try {
        const [{ channels }, agents] = await Promise.all([
          context.api.get<{ channels: ChannelDetail[] }>('/channels', context.signal),
          context.api.get<AgentList>('/agents', context.signal).catch(() => ({ agents: [] })),
        ]);
        const names = new Map(agents.agents.map((a) => [a.id, a.name]));
        fill(body, table(context, channels, names, load));
      } catch (error) {
        fill(body, errorBox(describeError(error)));
      }
    };
    fill(context.root, pageHeader('Channels', refreshButton('Refresh channels', load)), h('p', { class: 'lead' }, 'Messaging channels bridged to agents and workflows, and whether each is connected.'), body);
    await load();
  },
};

function table(context: PageContext, channels: ChannelDetail[], agents: Map<string, string>, reload: () => Promise<void>): HTMLElement {
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
      { header: 'Status', cell: (c) => badge(statusText(c.status), toneOf(statusText(c.status))) },
      { header: 'Enabled', cell: (c) => (c.enabled ? 'yes' : 'no') },
      { header: 'Delivers to', cell: (c) => (c.default_workflow !== null ? `workflow ${c.default_workflow}` : c.default_agent !== null ? `agent ${agents.get(c.default_agent) ?? c.default_agent}` : '—') },
      {
        header: 'Actions',
        cell: (c) => (mayManage ? actionButton(c.enabled ? 'Disable' : 'Enable', `${c.enabled ? 'Disable' : 'Enable'} channel ${c.id}`, toggle(c), c.enabled ? 'secondary' : 'primary') : null),
      },
    ],
    channels,
    'No channels. Create one with POST /channels (docs/channels.md).',
  );
}
