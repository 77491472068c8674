/**
 * HTML built from templates where every interpolated value is escaped unless it is already `Html`
 * (docs/registry.md "Web page"): a package's title, a README's heading or an owner string can
 * never become markup. `trustedHtml` is for the sanitised README fragment and nothing else.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What a template takes: text (escaped), numbers, Html, lists of those; null, undefined and false render nothing. */
export type HtmlPart = Html | string | number | null | undefined | false | readonly HtmlPart[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(part: HtmlPart): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: HtmlPart[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Markup already made safe (the README, through its sanitiser). */
export function trustedHtml(markup: string): Html {
  return new Html(markup);
}

/** An http(s) URL to put in an href, or null (publish checks them; the page checks again). */
export function httpUrl(url: string | undefined): string | null {
  return url !== undefined && /^https?:\/\/[^\s]+$/i.test(url) ? url : null;
}
