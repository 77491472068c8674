import { describe, expect, it } from 'vitest';
import { renderReadme } from './render-readme.ts';

// The README renderer against hostile input (docs/registry.md "README"): whatever a publisher
// writes, the fragment holds no script, no event handler, no style and no link or image a browser
// would run or fetch from a dangerous scheme.
const TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'blockquote', 'pre', 'code', 'em', 'strong', 's', 'ul', 'ol', 'li', 'a', 'img', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);
const ATTRIBUTES = new Set(['href', 'title', 'rel', 'src', 'alt', 'start', 'class']);

/** Every tag of the fragment is allowlisted, with allowlisted attributes and safe URLs only. */
function expectHarmless(html: string): void {
  for (const [, name, attributes] of html.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    expect(TAGS, name).toContain(name!.toLowerCase());
    for (const [, attribute, value] of attributes!.matchAll(/([^\s=/]+)(?:="([^"]*)")?/g)) {
      expect(ATTRIBUTES, `${name} ${attribute}`).toContain(attribute!.toLowerCase());
      if (attribute === 'href') expect(value).toMatch(/^(https?:\/\/|mailto:|[^:/]+(\/|$)|[^:]*$)/i);
      if (attribute === 'src') expect(value).toMatch(/^https?:\/\//i);
    }
  }
  // Whatever a hostile README wrote is at most text: never an element of these kinds.
  expect(html).not.toMatch(/<(script|style|iframe|object|embed|form|input|svg|math|link|meta|base)[\s>/]/i);
}

describe('renderReadme', () => {
  it('renders headings, lists, links, code, tables and images from http(s)', () => {
    const html = renderReadme(
      [
        '# Claims intake',
        '',
        'Takes the **first notice** of loss.',
        '',
        '- triage',
        '- summary',
        '',
        '[Docs](https://example.com/docs) and <https://example.com/x>, mail [us](mailto:team@example.com), see [usage](docs/usage.md).',
        '',
        '```js',
        'const a = 1 < 2;',
        '```',
        '',
        '| a | b |',
        '|:--|--:|',
        '| 1 | 2 |',
        '',
        '![logo](https://example.com/logo.png)',
      ].join('\n'),
    );
    expect(html).toContain('<h1>Claims intake</h1>');
    expect(html).toContain('<strong>first notice</strong>');
    expect(html).toContain('<li>triage</li>');
    expect(html).toContain('<a href="https://example.com/docs" rel="nofollow noopener">Docs</a>');
    expect(html).toContain('<a href="https://example.com/x" rel="nofollow noopener">https://example.com/x</a>');
    expect(html).toContain('<a href="mailto:team@example.com" rel="nofollow noopener">us</a>');
    expect(html).toContain('<a href="docs/usage.md" rel="nofollow noopener">usage</a>');
    expect(html).toContain('<code class="language-js">const a = 1 &lt; 2;');
    expect(html).toContain('<th class="align-left">a</th>');
    expect(html).toContain('<td class="align-right">2</td>');
    expect(html).toContain('<img src="https://example.com/logo.png" alt="logo" />');
    expectHarmless(html);
  });

  it('shows raw HTML as text: a script, an onerror image, an iframe, a style block', () => {
    const html = renderReadme(
      [
        '<script>window.pwned = true; alert(1)</script>',
        '',
        '<img src=x onerror="alert(1)">',
        '',
        '<div>',
        '<iframe src="https://evil.example"></iframe>',
        '<style>body{display:none}</style>',
        '</div>',
        '',
        'inline <b onclick="alert(1)">bold</b> and <a href="javascript:alert(1)">a link</a>',
      ].join('\n'),
    );
    expect(html).toContain('&lt;script&gt;window.pwned = true; alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror="alert(1)"&gt;');
    expect(html).not.toMatch(/<img/);
    expect(html).not.toMatch(/<b[ >]/);
    expect(html).not.toMatch(/<a [^>]*href="javascript/i);
    expectHarmless(html);
  });

  it('refuses javascript:, vbscript:, data: and protocol-relative targets in Markdown links and images', () => {
    const html = renderReadme(
      [
        '[one](javascript:alert(1)) [two](JaVaScRiPt:alert(1)) [three](vbscript:msgbox(1))',
        '[four](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [five](//evil.example/x)',
        '[six](&#106;avascript:alert(1)) [seven](java\tscript:alert(1))',
        '',
        '![pixel](data:image/png;base64,iVBORw0KGgo=) ![rel](images/logo.png) ![js](javascript:alert(1))',
      ].join('\n'),
    );
    expectHarmless(html);
    // Refused targets leave the text, not a link: no <a> at all here.
    expect(html).not.toMatch(/<a[\s>]/);
    expect(html).not.toMatch(/<img/);
    // The link texts stay readable.
    for (const word of ['one', 'two', 'three', 'four', 'five']) expect(html).toContain(word);
  });

  it('renders a very long or deeply nested README within the limit, harmlessly', () => {
    const started = Date.now();
    const nested = renderReadme(`${'> '.repeat(5000)}deep\n\n${'['.repeat(50_000)}\n\n${'*a '.repeat(20_000)}`);
    const long = renderReadme(`${'- item <script>x</script>\n'.repeat(9000)}`);
    expect(Date.now() - started).toBeLessThan(10_000);
    expectHarmless(nested);
    expectHarmless(long);
    expect(long.match(/<li>/g)).toHaveLength(9000);
  });
});
