import { actionButton, h, type Child } from '../lib/dom.ts';

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
