import type { PageContext } from '../app/page.ts';
import { describeError } from '../lib/api.ts';
import { actionButton, fill, h, type Child } from '../lib/dom.ts';

/** The page's heading (the target of focus after navigation) and its page-level actions. */
export function pageHeader(title: string, ...actions: Child[]): HTMLElement {
  return h(
    'div',
    { class: 'page-header' },
    h('h1', { id: 'page-title', tabindex: -1 }, title),
    h('div', { class: 'page-actions' }, ...actions),
  );
}

/** A failure to load: read out at once. */
export function errorBox(message: string): HTMLElement {
  return h('div', { class: 'notice error', role: 'alert' }, message);
}

/** A page or section the role cannot read; says which roles can. */
export function notAllowed(what: string, roles: readonly string[] | undefined): HTMLElement {
  const who =
    roles === undefined || roles.length === 0
      ? 'another role'
      : `the ${roles.join(', ')} role${roles.length === 1 ? '' : 's'}`;
  return h('p', { class: 'notice muted' }, `${what} needs ${who}.`);
}

export function refreshButton(label: string, load: () => Promise<void>): HTMLButtonElement {
  return actionButton('Refresh', label, load);
}

/** A section with its own heading (h2), for pages of several parts. */
export function section(title: string, ...children: Child[]): HTMLElement {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return h('section', { class: 'panel', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

/** A description list of label/value pairs. */
export function facts(pairs: ReadonlyArray<readonly [string, Child]>): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    ...pairs.flatMap(([label, value]) => [h('dt', null, label), h('dd', null, value)]),
  );
}

/**
 * The render of a page that is one table under its header and lead paragraph: `rows` loads it,
 * `table` draws it (with `reload` for its actions and the Refresh button); a failure to load shows
 * as an alert in the table's place.
 */
export function tablePage<R>(spec: {
  title: string;
  lead: string;
  rows: (context: PageContext) => Promise<R>;
  table: (context: PageContext, rows: R, reload: () => Promise<void>) => HTMLElement;
}): (context: PageContext) => Promise<void> {
  return async (context) => {
    const body = h('div');
    const load = async (): Promise<void> => {
      try {
        fill(body, spec.table(context, await spec.rows(context), load));
      } catch (error) {
        fill(body, errorBox(describeError(error)));
      }
    };
    fill(
      context.root,
      pageHeader(spec.title, refreshButton(`Refresh ${spec.title.toLowerCase()}`, load)),
      h('p', { class: 'lead' }, spec.lead),
      body,
    );
    await load();
  };
}
