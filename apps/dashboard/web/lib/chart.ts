import { h, s, uid } from './dom.ts';

export interface BarPoint {
  /** Axis label (a week's first day). */
  label: string;
  value: number;
}

const WIDTH = 640;
const HEIGHT = 220;
const PAD = { top: 20, right: 12, bottom: 36, left: 40 };

/** A round upper bound for the axis: 1, 2, 5, 10, 20, 50, ... at or above `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= max) return step * magnitude;
  return 10 * magnitude;
}

/**
 * A bar chart drawn as SVG (no chart library, nothing fetched). For screen readers the SVG is
 * one image with a title and a summary, and the same numbers follow as a table.
 */
export function barChart(title: string, points: readonly BarPoint[], unit: string): HTMLElement {
  const titleId = uid('chart-title');
  const descId = uid('chart-desc');
  const max = niceMax(Math.max(0, ...points.map((p) => p.value)));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = points.length === 0 ? plotW : plotW / points.length;
  const barW = Math.max(4, slot * 0.6);
  const y = (value: number): number => PAD.top + plotH - (value / max) * plotH;
  const total = points.reduce((sum, p) => sum + p.value, 0);
  // Whole numbers only: a half-way line is drawn when it falls on one.
  const gridValues = Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max];
  // Every label when they fit, else every other one (12 weeks on a narrow chart still read).
  const labelEvery = points.length > 8 ? 2 : 1;

  const svg = s(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      'aria-labelledby': `${titleId} ${descId}`,
      preserveAspectRatio: 'xMidYMid meet',
    },
    s('title', { id: titleId }, title),
    s(
      'desc',
      { id: descId },
      `${points.length} bars, ${total} ${unit} in all, at most ${Math.max(0, ...points.map((p) => p.value))} in one.`,
    ),
    ...gridValues.map((value) =>
      s(
        'g',
        { class: 'grid' },
        s('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }),
        s('text', { x: PAD.left - 6, y: y(value) + 4, 'text-anchor': 'end' }, String(Math.round(value))),
      ),
    ),
    ...points.map((point, i) => {
      const x = PAD.left + i * slot + (slot - barW) / 2;
      return s(
        'g',
        { class: 'bar' },
        s(
          'rect',
          { x, y: y(point.value), width: barW, height: Math.max(0, PAD.top + plotH - y(point.value)) },
          s('title', null, `${point.label}: ${point.value} ${unit}`),
        ),
        point.value > 0
          ? s(
              'text',
              { class: 'value', x: x + barW / 2, y: y(point.value) - 4, 'text-anchor': 'middle' },
              String(point.value),
            )
          : null,
        (points.length - 1 - i) % labelEvery === 0
          ? s(
              'text',
              { class: 'axis', x: x + barW / 2, y: HEIGHT - PAD.bottom + 16, 'text-anchor': 'middle' },
              point.label,
            )
          : null,
      );
    }),
  );
  const table = h(
    'table',
    { class: 'data compact' },
    h('caption', null, `${title} (data)`),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Week of'), h('th', { scope: 'col' }, unit))),
    h(
      'tbody',
      null,
      ...points.map((p) =>
        h('tr', null, h('th', { scope: 'row' }, p.label), h('td', { class: 'num' }, p.value)),
      ),
    ),
  );
  return h(
    'figure',
    { class: 'chart-figure' },
    svg,
    h('details', null, h('summary', null, 'Show the numbers'), table),
  );
}

/**
 * A labelled gauge of `used` against `budget` (a native <meter>, which assistive technology reads
 * as a value in a range), or a plain count when the budget is uncapped.
 */
export function budgetMeter(
  label: string,
  used: number,
  budget: number | null,
  format: (n: number) => string = String,
): HTMLElement {
  const id = uid('meter');
  if (budget === null) {
    return h(
      'div',
      { class: 'meter-row' },
      h('span', { class: 'meter-label', id }, label),
      h('span', { class: 'meter-text' }, `${format(used)} used, uncapped`),
    );
  }
  const meter = h('meter', {
    min: 0,
    max: Math.max(budget, 0.000001),
    value: Math.min(used, budget),
    low: budget * 0.75,
    high: budget * 0.9,
    optimum: 0,
    'aria-labelledby': id,
  });
  const pct = budget > 0 ? Math.round((used / budget) * 100) : 100;
  return h(
    'div',
    { class: 'meter-row' },
    h('span', { class: 'meter-label', id }, label),
    meter,
    h('span', { class: 'meter-text' }, `${format(used)} of ${format(budget)} (${pct}%)`),
  );
}
