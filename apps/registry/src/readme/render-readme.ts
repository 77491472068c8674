import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

/**
 * Markdown as CommonMark with GitHub's tables and strikethrough, and bare URLs made links. Raw HTML
 * is off (`html: false`): a `<script>` or `<img onerror>` in a README is shown as text, never
 * parsed as markup. markdown-it also refuses `javascript:`, `vbscript:`, `file:` and most `data:`
 * link targets itself; the sanitiser below is the second, independent wall.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });

const HTTP_URL = /^https?:\/\//i;

/** markdown-it writes a table column's alignment as `style="text-align:..."`; the page's CSP refuses inline styles, so it becomes a class. */
function alignmentClass(attribs: Record<string, string>): Record<string, string> {
  const align = /text-align:\s*(left|right|center)/.exec(attribs.style ?? '')?.[1];
  return align === undefined ? {} : { class: `align-${align}` };
}

/**
 * The allowlist every rendered README goes through (docs/registry.md "README"): text structure,
 * links and images only. No script, style, iframe, form or any attribute but those listed (so
 * no `on*` handler, no `style`); links only to http, https, mailto and relative targets, each
 * with `rel="nofollow noopener"`; images only from http(s) URLs (a relative or `data:` image is
 * dropped).
 */
const POLICY: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'blockquote', 'pre', 'code', 'em', 'strong', 's',
    'ul', 'ol', 'li', 'a', 'img', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'title'],
    ol: ['start'],
    code: ['class'],
    th: ['class'],
    td: ['class'],
  },
  allowedClasses: { code: ['language-*'], th: ['align-*'], td: ['align-*'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'nofollow noopener' } }),
    th: (tagName, attribs) => ({ tagName, attribs: alignmentClass(attribs) }),
    td: (tagName, attribs) => ({ tagName, attribs: alignmentClass(attribs) }),
  },
  // An image whose source was refused (or is relative) would be an empty <img>: drop it whole. A
  // link whose target was refused keeps its text only.
  exclusiveFilter: (frame) => {
    if (frame.tag === 'img') return !HTTP_URL.test(frame.attribs.src ?? '');
    if (frame.tag === 'a' && frame.attribs.href === undefined) return 'excludeTag';
    return false;
  },
};

/** A README's Markdown as an HTML fragment safe to put in a page of the registry's origin. */
export function renderReadme(text: string): string {
  return sanitizeHtml(markdown.render(text), POLICY);
}
