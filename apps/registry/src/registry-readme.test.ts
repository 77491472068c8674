import { openExampleArchives, repack, type ExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestRegistry, TEST_IDENTITY_HEADER, TEST_ROLE_HEADER, type TestRegistry } from './testing/test-registry.ts';

// READMEs kept at publish and served rendered and sanitised (docs/registry.md "README"), over HTTP.
const ALICE = { [TEST_IDENTITY_HEADER]: 'key:alice', [TEST_ROLE_HEADER]: 'publisher' };

const HOSTILE = [
  '# Loss summary',
  '',
  '- one',
  '- two',
  '',
  '[docs](https://example.com/docs) [bad](javascript:alert(1)) [data](data:text/html;base64,PHNjcmlwdD4=)',
  '',
  '<script>window.pwned = true</script>',
  '',
  '<img src=x onerror="window.pwned = true">',
  '',
  '<div onclick="x()"><iframe src="https://evil.example"></iframe></div>',
].join('\n');

let examples: ExampleArchives;
let registry: TestRegistry;
beforeAll(async () => {
  examples = await openExampleArchives();
});
afterAll(async () => examples.close());
beforeEach(async () => {
  registry = await startTestRegistry();
});
afterEach(async () => registry.close());

const get = (path: string) => fetch(`${registry.url}${path}`);

async function publish(version: string, readme?: string): Promise<Record<string, unknown>> {
  const built = await examples.build('loss-summary', { version });
  const archive = readme === undefined ? built : repack(built, (files) => files.set('README.md', new TextEncoder().encode(readme)));
  const answer = await fetch(`${registry.url}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip', ...ALICE }, body: archive });
  const body = (await answer.json()) as Record<string, unknown>;
  expect(answer.status, JSON.stringify(body)).toBe(201);
  return body;
}

describe('README of a version', () => {
  it('is kept at publish and served rendered, sanitised, as an HTML fragment', async () => {
    const published = await publish('1.0.0', HOSTILE);
    expect(published.has_readme).toBe(true);
    expect(published).not.toHaveProperty('readme');
    expect(((await (await get('/packages/loss-summary/1.0.0')).json()) as { has_readme: boolean }).has_readme).toBe(true);

    for (const path of ['/packages/loss-summary/readme', '/packages/loss-summary/1.0.0/readme']) {
      const answer = await get(path);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(answer.headers.get('x-readme-version')).toBe('1.0.0');
      expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await answer.text();
      expect(html).toContain('<h1>Loss summary</h1>');
      expect(html).toContain('<li>one</li>');
      expect(html).toContain('<a href="https://example.com/docs" rel="nofollow noopener">docs</a>');
      expect(html).toContain('&lt;script&gt;window.pwned = true&lt;/script&gt;');
      expect(html).not.toMatch(/<(script|iframe|img|div)[\s>]/i);
      expect(html).not.toMatch(/<a [^>]*href="(javascript|data):/i);
      expect(html).not.toMatch(/<[^>]+\son\w+=/i);
    }
  });

  it('follows the latest version; each version keeps its own; a yank moves the latest back', async () => {
    await publish('1.0.0', '# First');
    await publish('1.1.0', '# Second');
    expect(await (await get('/packages/loss-summary/readme')).text()).toContain('<h1>Second</h1>');
    expect(await (await get('/packages/loss-summary/1.0.0/readme')).text()).toContain('<h1>First</h1>');
    const yank = await fetch(`${registry.url}/packages/loss-summary/1.1.0/yank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ALICE },
      body: JSON.stringify({ reason: 'wrong' }),
    });
    expect(yank.status).toBe(200);
    const latest = await get('/packages/loss-summary/readme');
    expect(latest.headers.get('x-readme-version')).toBe('1.0.0');
    expect(await latest.text()).toContain('<h1>First</h1>');
  });

  it('is 404 for a version without one, 404 for an unknown package or version, 400 for a bad name', async () => {
    const published = await publish('1.0.0');
    expect(published.has_readme).toBe(false);
    const none = await get('/packages/loss-summary/readme');
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ error: { category: 'NotFound', details: { kind: 'readme', id: 'loss-summary@1.0.0' } } });
    expect((await get('/packages/loss-summary/1.0.0/readme')).status).toBe(404);
    expect(await (await get('/packages/loss-summary/2.0.0/readme')).json()).toMatchObject({ error: { details: { kind: 'version' } } });
    expect(await (await get('/packages/nothing-here/readme')).json()).toMatchObject({ error: { details: { kind: 'package' } } });
    expect((await get('/packages/Bad_Name/readme')).status).toBe(400);
    expect((await get('/packages/loss-summary/not-a-version/readme')).status).toBe(400);
  });

  it('refuses a README over 256 KiB at publish (rule readme-too-large), nothing stored', async () => {
    const archive = repack(await examples.build('loss-summary'), (files) => files.set('README.md', new Uint8Array(256 * 1024 + 1).fill(0x61)));
    const answer = await fetch(`${registry.url}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip', ...ALICE }, body: archive });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: { details: { problems: [{ file: 'README.md', rule: 'readme-too-large' }] } } });
    expect((await get('/packages/loss-summary')).status).toBe(404);
  });

  it('is listed in the OpenAPI document', async () => {
    const document = (await (await get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/packages/{name}/readme', '/packages/{name}/{version}/readme']));
    expect(Object.keys(document.paths).filter((p) => p.startsWith('/ui'))).toEqual([]);
  });
});
