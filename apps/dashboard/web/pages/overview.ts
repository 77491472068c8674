import type { AgentList, LicenceStatus, RunList, VerifyResponse } from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { fill, h, type Child } from '../lib/dom.ts';
import { formatNumber } from '../lib/format.ts';
import { badge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { attentionPanel } from './attention.ts';
import { pageHeader, refreshButton } from './common.ts';

/** A tile: a figure, what it means, and the page with the details. */
function card(title: string, href: string, body: Child): HTMLElement {
  return h(
    'li',
    { class: 'card' },
    h('h2', null, h('a', { href }, title)),
    h('div', { class: 'card-body' }, body),
  );
}

async function tile(load: () => Promise<Child>): Promise<Child> {
  try {
    return await load();
  } catch (error) {
    return h('p', { class: 'error-text' }, describeError(error));
  }
}

/**
 * The platform at a glance: first what needs a person (attention.ts), then which agents run, which
 * runs are going or failed, whether the audit chain holds, how much licence is left.
 */
export const overviewPage: Page = {
  path: '',
  title: 'Overview',
  needs: ['AgentList'],
  async render(context) {
    const grid = h('ul', { class: 'cards' });
    const attention = h('div');
    const load = async (): Promise<void> => {
      const once = readingOnce(context);
      // Each part shown as soon as it is ready: the cards do not wait for the slowest check.
      await Promise.all([
        attentionPanel(once).then((panel) => fill(attention, panel)),
        cards(once).then((tiles) => fill(grid, ...tiles)),
      ]);
    };
    fill(context.root, pageHeader('Overview', refreshButton('Refresh overview', load)), attention, grid);
    await load();
  },
};

/**
 * The context of one load of the overview: the attention panel and the cards ask for some of the
 * same things (`/security/verify`, which walks the audit chain, `/licence/status`, the failed
 * runs); each path is read once per load and shared.
 */
function readingOnce(context: PageContext): PageContext {
  const reads = new Map<string, Promise<unknown>>();
  const get = <T>(path: string, signal?: AbortSignal): Promise<T> => {
    let read = reads.get(path);
    if (read === undefined) {
      read = context.api.get<T>(path, signal);
      reads.set(path, read);
    }
    return read as Promise<T>;
  };
  return { ...context, api: { ...context.api, get } };
}

async function cards(context: PageContext): Promise<HTMLElement[]> {
  const { api, session, signal } = context;
  const tiles: Array<Promise<HTMLElement>> = [];
  tiles.push(
    tile(async () => {
      const { agents } = await api.get<AgentList>('/agents', signal);
      const running = agents.filter((a) => a.state === 'Running').length;
      return [
        h(
          'p',
          { class: 'figure' },
          formatNumber(running),
          h('span', { class: 'unit' }, ` of ${agents.length} running`),
        ),
        agents.length > running ? h('p', null, `${agents.length - running} suspended`) : null,
      ];
    }).then((body) => card('Agents', '/dashboard/agents', body)),
  );
  if (session.can('WorkflowList')) {
    tiles.push(
      tile(async () => {
        const [running, failed] = await Promise.all([
          api.get<RunList>('/runs?state=Running&limit=1000', signal),
          api.get<RunList>('/runs?state=Failed&limit=1000', signal),
        ]);
        return [
          h(
            'p',
            { class: 'figure' },
            formatNumber(running.runs.length),
            h('span', { class: 'unit' }, ' running'),
          ),
          h(
            'p',
            null,
            h('a', { href: '/dashboard/runs?state=Failed' }, `${formatNumber(failed.runs.length)} failed`),
          ),
        ];
      }).then((body) => card('Workflow runs', '/dashboard/runs', body)),
    );
  }
  if (session.can('SecurityRead')) {
    tiles.push(
      tile(async () => {
        const result = await api.get<VerifyResponse>('/security/verify', signal);
        if (result.valid === null) return h('p', null, 'Audit is disabled.');
        return [
          h(
            'p',
            { class: 'figure' },
            badge(result.valid ? 'chain holds' : 'chain broken', result.valid ? 'ok' : 'bad'),
          ),
          h('p', null, `${formatNumber(result.entry_count)} entries`),
        ];
      }).then((body) => card('Audit trail', '/dashboard/audit', body)),
    );
  }
  if (session.can('LicenceRead')) {
    tiles.push(
      tile(async () => {
        const licence = await api.get<LicenceStatus>('/licence/status', signal);
        if (licence.status === 'no_licence') return h('p', { class: 'figure' }, badge('no licence', 'bad'));
        return [
          h(
            'p',
            { class: 'figure' },
            formatNumber(licence.days_remaining),
            h('span', { class: 'unit' }, ' days left'),
          ),
          h(
            'p',
            null,
            badge(
              licence.status.replace('_', ' '),
              licence.status === 'active' ? 'ok' : licence.status === 'expired' ? 'bad' : 'warn',
            ),
            ` ${licence.carrier_name}`,
          ),
        ];
      }).then((body) => card('Licence', '/dashboard/licence', body)),
    );
  }
  return Promise.all(tiles);
}
