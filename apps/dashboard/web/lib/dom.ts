/**
 * A few lines instead of a framework: elements are built with `h()` and filled with text nodes,
 * never with innerHTML, so nothing the api returns (agent names, audit targets, run outputs) can
 * become markup. No inline style attribute is ever written either: the page's CSP forbids it.
 */
export type Child = Node | string | number | null | undefined | false | readonly Child[];
type AttrValue = string | number | boolean | null | undefined;
export type Attrs = Record<string, AttrValue | ((event: Event) => void)>;

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child as readonly Child[]);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child as string | number)));
  }
}

function setAttrs(element: Element, attrs: Attrs | null | undefined): void {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined)
      element.setAttribute(name, String(value));
  }
}

/** An HTML element: `h('button', { type: 'button', onclick: go }, 'Go')`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  setAttrs(element, attrs);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg' as const;

/** An SVG element (charts). */
export function s(tag: string, attrs?: Attrs | null, ...children: Child[]): SVGElement {
  const element = document.createElementNS(SVG_NS, tag);
  setAttrs(element, attrs);
  append(element, children);
  return element;
}

/** Replaces an element's children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

let nextId = 0;
/** A document-unique id for label/aria wiring. */
export function uid(prefix: string): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/** A labelled form field: `<label for>` + the control, so that every control has an accessible name. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): HTMLElement {
  control.id ||= uid('field');
  const hintId = hint === undefined ? null : `${control.id}-hint`;
  if (hintId !== null) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hintId === null ? null : h('p', { class: 'hint', id: hintId }, hint),
  );
}

/** A `<select>` of options `[value, text]`. */
export function select(
  name: string,
  options: ReadonlyArray<readonly [string, string]>,
  value?: string,
): HTMLSelectElement {
  const element = h('select', { name }, ...options.map(([v, text]) => h('option', { value: v }, text)));
  // Only a value one of the options has: any other would leave the select showing nothing.
  if (value !== undefined && options.some(([v]) => v === value)) element.value = value;
  return element;
}

/** A button that runs `action`, disabled while it runs (no double submit). */
export function actionButton(
  label: string,
  accessibleName: string,
  action: () => Promise<void>,
  variant: 'primary' | 'secondary' | 'danger' = 'secondary',
): HTMLButtonElement {
  const button = h(
    'button',
    {
      type: 'button',
      class: `button ${variant}`,
      'aria-label': accessibleName === label ? null : accessibleName,
    },
    label,
  );
  button.addEventListener('click', () => {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    void action().finally(() => {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    });
  });
  return button;
}
