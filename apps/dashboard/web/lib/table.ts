import { h, type Child } from './dom.ts';
import { words } from './format.ts';

export interface Column<T> {
  header: string;
  cell: (row: T) => Child;
  /** Right-aligned numbers. */
  numeric?: boolean;
  /** The row's header cell (`<th scope="row">`), which names the row for screen readers. */
  rowHeader?: boolean;
}

/** A data table with a caption (its accessible name), column headers and an empty-state row. */
export function dataTable<T>(
  caption: string,
  columns: readonly Column<T>[],
  rows: readonly T[],
  empty: string,
): HTMLTableElement {
  return h(
    'table',
    { class: 'data' },
    h('caption', null, caption),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...columns.map((c) => h('th', { scope: 'col', class: c.numeric === true ? 'num' : null }, c.header)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.length === 0
        ? h('tr', null, h('td', { colspan: columns.length, class: 'empty' }, empty))
        : rows.map((row) =>
            h(
              'tr',
              null,
              ...columns.map((c) =>
                c.rowHeader === true
                  ? h('th', { scope: 'row', class: c.numeric === true ? 'num' : null }, c.cell(row))
                  : h('td', { class: c.numeric === true ? 'num' : null }, c.cell(row)),
              ),
            ),
          ),
    ),
  );
}

/** A word with a colour that matches its meaning; the word itself carries the meaning (not the colour alone). */
export function badge(text: string, tone: 'ok' | 'warn' | 'bad' | 'neutral' | 'info'): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text);
}

/** A state shown as a badge: the value in words, the tone from the raw value. */
export function stateBadge(state: string): HTMLElement {
  return badge(words(state), toneOf(state));
}

/** The tone of a state word across the pages. */
export function toneOf(state: string): 'ok' | 'warn' | 'bad' | 'neutral' | 'info' {
  const word = state.split(':')[0]!.trim();
  if (
    [
      'Running',
      'Completed',
      'Connected',
      'Healthy',
      'Satisfied',
      'active',
      'fired',
      'Equipped',
      'Installed',
      'valid',
      'enabled',
    ].includes(word)
  )
    return 'ok';
  if (
    [
      'Pending',
      'Suspended',
      'Degraded',
      'expiring_soon',
      'Unknown',
      'Disconnected',
      'running',
      'skipped_overlap',
      'skipped_paused',
      'paused',
    ].includes(word)
  )
    return 'warn';
  if (
    [
      'Failed',
      'Error',
      'Unreachable',
      'Unsatisfied',
      'expired',
      'no_licence',
      'refused',
      'failed',
      'missed',
      'invalid',
      'Escalated',
    ].includes(word)
  )
    return 'bad';
  if (['NotConfigured', 'Disabled', 'disabled'].includes(word)) return 'neutral';
  return 'info';
}
