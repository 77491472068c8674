import { defaultConfig } from '@agent-platform/config';
import { systemClock } from '@agent-platform/domain';
import { createRegistryKeyService, registryRecords } from '@agent-platform/registry-core';
import { openExampleArchives, repack, type ExampleArchives } from '@agent-platform/registry-core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRegistry, TEST_IDENTITY_HEADER, TEST_ROLE_HEADER, type TestRegistry } from '../testing/test-registry.ts';

// The registry's web page over HTTP (docs/registry.md "Web page"): server-rendered, every value
// escaped, a CSP without script, HTML refusals, and the `read` access of the package reads. The
// page in a browser is tests/e2e/registry-web.test.ts.
const ALICE = { [TEST_IDENTITY_HEADER]: 'key:alice', [TEST_ROLE_HEADER]: 'publisher' };

let examples: ExampleArchives;
let registry: TestRegistry;
beforeAll(async () => {
  examples = await openExampleArchives();
});
afterAll(async () => examples.close());
afterEach(async () => registry.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${registry.url}${path}`, { headers, redirect: 'manual' });

async function publish(archive: Uint8Array, headers: Record<string, string> = ALICE): Promise<void> {
  const answer = await fetch(`${registry.url}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip', ...headers }, body: archive });
  expect(answer.status, await answer.clone().text()).toBe(201);
}

async function page(path: string, status = 200): Promise<string> {
  const answer = await get(path);
  expect(answer.status, path).toBe(status);
  expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = answer.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
  expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  return answer.text();
}

describe('the registry web page', () => {
  it('browses and searches with paging, escaping every value, and marks deprecated packages', async () => {
    registry = await startTestRegistry();
    // A title with markup in it: shown as text on every page.
    const hostileTitle = (text: string) => text.replace(/^title = .*$/m, 'title = "Loss <b>summary</b> & \\"friends\\""');
    await publish(await examples.build('loss-summary', { edit: hostileTitle }));
    for (let i = 0; i < 21; i++) {
      const name = `bulk-${String(i).padStart(2, '0')}`;
      await publish(await examples.build('loss-summary', { edit: (t) => t.replace(/^name = "loss-summary"/m, `name = "${name}"`) }));
    }
    const deprecated = await fetch(`${registry.url}/packages/bulk-00/deprecation`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...ALICE },
      body: JSON.stringify({ message: 'use <loss-summary>' }),
    });
    expect(deprecated.status).toBe(200);

    expect((await get('/')).headers.get('location')).toBe('/ui/');
    expect((await get('/ui')).headers.get('location')).toBe('/ui/');
    const all = await page('/ui/');
    expect(all).toContain('22 packages, page 1 of 2');
    expect(all).toContain('href="/ui/?page=2"');
    expect(all).toMatch(/bulk-00<\/a>[\s\S]*?deprecated/);
    expect(all).toContain('title="use &lt;loss-summary&gt;"');
    const second = await page('/ui/?page=2');
    expect(second).toContain('page 2 of 2');
    expect(second).toContain('href="/ui/packages/loss-summary"');

    const found = await page('/ui/?q=summary+%3Cscript%3E');
    expect(found).not.toContain('<script>');
    expect(found).toContain('value="summary &lt;script&gt;"');
    // A link from elsewhere may carry parameters the page does not use: still the page.
    const hits = await page('/ui/?q=loss-summary&utm_source=mail');
    expect(hits).toContain('Loss &lt;b&gt;summary&lt;/b&gt; &amp; &quot;friends&quot;');
    expect(hits).not.toContain('<b>summary</b>');
    expect(await page(`/ui/?q=${'x'.repeat(201)}`, 400)).toContain('at most 200 characters');
  });

  it('shows a package: README, versions with their state, owners, downloads, install line; 404 and 400 as pages', async () => {
    registry = await startTestRegistry();
    const readme = '# Loss summary\n\n<script>window.pwned = 1</script>\n\n- quick\n';
    await publish(repack(await examples.build('loss-summary', { version: '1.0.0' }), (f) => f.set('README.md', new TextEncoder().encode(readme))));
    await publish(await examples.build('loss-summary', { version: '1.1.0' }));
    await publish(await examples.build('loss-summary', { version: '1.2.0' }));
    const yank = (version: string, security: boolean) =>
      fetch(`${registry.url}/packages/loss-summary/${version}/yank`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ALICE },
        body: JSON.stringify({ reason: `pulled ${version}`, security }),
      });
    expect((await yank('1.1.0', false)).status).toBe(200);
    expect((await yank('1.2.0', true)).status).toBe(200);
    expect((await get('/packages/loss-summary/1.0.0/download')).status).toBe(200);
    // 1.0.0 as trusted publishing records it (docs/registry-auth.md "Trusted publishing").
    const provenance = { kind: 'trusted-publishing' as const, identity: 'https://ci.example#repo:acme/<loss>', issuer: 'https://ci.example', claims: { repository: 'acme/loss-summary' } };
    await registryRecords(registry.deps.store).versions.update('loss-summary@1.0.0', (current) => (current === null ? null : { ...current.doc, provenance }));

    const html = await page('/ui/packages/loss-summary');
    expect(html).toContain('Published from acme/loss-summary by https://ci.example#repo:acme/&lt;loss&gt;');
    expect(html).toContain('<h1>Loss summary</h1>');
    expect(html).toContain('&lt;script&gt;window.pwned = 1&lt;/script&gt;');
    expect(html).not.toMatch(/<script/i);
    expect(html).toMatch(/data-version="1\.2\.0"[\s\S]*?security-yanked[\s\S]*?revoked/);
    expect(html).toMatch(/data-version="1\.1\.0"[\s\S]*?>yanked</);
    expect(html).toMatch(/data-version="1\.0\.0"[\s\S]*?listed/);
    expect(html).toContain('<li>key:alice</li>');
    expect(html).toContain('data-downloads-total="1"');
    expect(html).toContain('{&quot;name&quot;:&quot;loss-summary&quot;,&quot;version&quot;:&quot;^1.0.0&quot;}');
    expect(html).toContain('curl -s -X POST &quot;$AP/catalog/install&quot;');

    expect(await page('/ui/packages/nothing-here', 404)).toContain('package &#39;nothing-here&#39; not found');
    expect(await page('/ui/packages/Bad_Name', 400)).toContain('Bad request');
    expect(await page('/ui/nowhere', 404)).toContain('There is no such page.');
    const css = await get('/ui/assets/registry.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('follows read access: with read_requires_auth a browser without a credential gets a 401 page, a reader the page', async () => {
    const auth = { ...defaultConfig().registry.auth, mode: 'local' as const, read_requires_auth: true };
    registry = await startTestRegistry({ realAuth: true, registry: { auth } });
    const keys = createRegistryKeyService({ store: registry.deps.store, clock: systemClock });
    const publisher = await keys.create({ name: 'alice', role: 'publisher' });
    const reader = await keys.create({ name: 'reader', role: 'reader' });
    await publish(await examples.build('loss-summary'), { authorization: `Bearer ${publisher.secret}` });
    for (const path of ['/ui/', '/ui/packages/loss-summary', '/ui/nowhere']) {
      // A page, not JSON: a browser shows it as one, saying why and what to use instead.
      const refused = await get(path);
      expect(refused.status, path).toBe(401);
      expect(refused.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'");
      const body = await refused.text();
      expect(body).toContain('<h1>Sign-in required</h1>');
      expect(body).toContain('read_requires_auth');
      expect(body).not.toContain('loss-summary');
    }
    // A bad credential on a page is refused the same way; the API answers its envelope.
    expect((await get('/ui/', { authorization: 'Bearer reg_sk_wrong' })).headers.get('content-type')).toBe('text/html; charset=utf-8');
    const api = await get('/packages/loss-summary/readme');
    expect(api.status).toBe(401);
    expect(api.headers.get('content-type')).toContain('application/json');
    expect((await get('/ui/packages/loss-summary', { authorization: `Bearer ${reader.secret}` })).status).toBe(200);
    expect((await get('/ui/assets/registry.css')).status).toBe(200);
    // Failed attempts go on until the client is locked out: a 429 page, with Retry-After.
    let locked: Response | undefined;
    for (let attempt = 0; attempt < 15 && locked === undefined; attempt++) {
      const answer = await get('/ui/', { authorization: `Bearer reg_sk_wrong-${attempt}` });
      if (answer.status === 429) locked = answer;
      else expect(answer.status).toBe(401);
    }
    expect(locked?.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(locked?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await locked?.text()).toContain('<h1>Too many attempts</h1>');
  });
});
