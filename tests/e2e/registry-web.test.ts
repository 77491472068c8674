import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openExampleArchives, registryCall, repack, type ExampleArchives, type RegistryAnswer, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { freePort } from '@agent-platform/testkit';
import { launchChromium, requireChromium, screenshot, watchPage, type PageProblems } from '@agent-platform/testkit/browser';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/platform-process.ts';
import { startApp, type AppProcess } from '../support/fleet.ts';

// The registry's web page (docs/registry.md "Web page") as a person uses it, in Debian's Chromium,
// against a registry process started as users start it (auth mode local, its first key through the
// bootstrap rule): search finds a package, its page shows the README rendered while the README's
// hostile script never runs, the CSP, yanked / security-yanked / revoked versions, owners,
// downloads, the install line and a deprecation banner; no console error or CSP violation anywhere.
// Screenshots land in .tmp/registry-web-screenshots/.
const chromiumPath = requireChromium();
const SCREENSHOT_DIR = join(ROOT, '.tmp', 'registry-web-screenshots');

const README = [
  '# Loss summary',
  '',
  'Summarises a **loss** for the adjuster.',
  '',
  '- reads the first notice',
  '- writes the summary',
  '',
  'See [the claims guide](https://example.com/claims-guide).',
  '',
  '<script>window.pwned = true; alert("pwned")</script>',
  '',
  '<img src="x" onerror="window.pwned = true; alert(1)">',
  '',
  '[click me](javascript:window.pwned=true)',
].join('\n');

describe.skipIf(chromiumPath === null)('the registry web page in Chromium (registry process, auth local)', () => {
  let dir: string;
  let registry: AppProcess;
  let url: string;
  let examples: ExampleArchives;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: PageProblems;
  const dialogs: string[] = [];

  const send = (method: string, path: string, bearer: string, options: RegistryCallOptions = {}): Promise<RegistryAnswer> =>
    registryCall(url, method, path, { ...options, bearer });
  const renamed = (name: string) => (text: string) => text.replace(/^name = "loss-summary"/m, `name = "${name}"`);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-registry-web-'));
    const config = join(dir, 'registry.toml');
    await writeFile(config, stringify({ storage: { data_dir: join(dir, 'data') }, registry: { listen: `127.0.0.1:${await freePort()}`, auth: { mode: 'local' } } }));
    registry = startApp('registry', config);
    url = await registry.ready();
    examples = await openExampleArchives();

    const admin: string = (await registryCall(url, 'POST', '/keys', { json: { name: 'admin', role: 'registry-admin' } })).body.secret;
    const ci: string = (await send('POST', '/keys', admin, { json: { name: 'claims-ci', role: 'publisher' } })).body.secret;
    const publish = async (archive: Uint8Array) => {
      const answer = await send('POST', '/packages', ci, { archive });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    };
    // loss-summary: a README with a hostile script, three versions, two of them pulled, downloads.
    await publish(repack(await examples.build('loss-summary', { version: '1.0.0' }), (files) => files.set('README.md', new TextEncoder().encode(README))));
    await publish(await examples.build('loss-summary', { version: '1.1.0' }));
    await publish(await examples.build('loss-summary', { version: '1.2.0' }));
    expect((await send('POST', '/packages/loss-summary/1.1.0/yank', ci, { json: { reason: 'wrong totals' } })).status).toBe(200);
    expect((await send('POST', '/packages/loss-summary/1.2.0/yank', ci, { json: { reason: 'leaks claimant data', security: true } })).status).toBe(200);
    for (const version of ['1.0.0', '1.0.0', '1.1.0']) expect((await fetch(`${url}/packages/loss-summary/${version}/download`)).status).toBe(200);
    // loss-digest: deprecated.
    await publish(await examples.build('loss-summary', { edit: renamed('loss-digest') }));
    expect((await send('PUT', '/packages/loss-digest/deprecation', ci, { json: { message: 'use loss-summary instead' } })).status).toBe(200);

    browser = await launchChromium(chromiumPath!);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    problems = await watchPage(context);
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await registry?.kill();
    await examples?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('opens at / with a strict Content-Security-Policy and lists every package', async () => {
    const response = await page.goto(`${url}/`);
    expect(response?.status()).toBe(200);
    expect(page.url()).toBe(`${url}/ui/`);
    const csp = (await response!.allHeaders())['content-security-policy'];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
    await page.getByRole('heading', { level: 1, name: 'All packages' }).waitFor();
    expect(await page.locator('ul.results a.name').allTextContents()).toEqual(['loss-digest', 'loss-summary']);
    await expect.poll(() => page.locator('ul.results li', { hasText: 'loss-digest' }).textContent()).toContain('deprecated');
    await screenshot(page, SCREENSHOT_DIR, '01-browse');
    expect(problems.take()).toEqual([]);
  });

  it('searches with the search box and opens a package from the results', async () => {
    await page.getByRole('searchbox', { name: 'Search' }).fill('summary');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Results for “summary”' }).waitFor();
    expect(page.url()).toBe(`${url}/ui/?q=summary`);
    await page.getByRole('link', { name: 'loss-summary', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /^loss-summary/ }).waitFor();
    expect(page.url()).toBe(`${url}/ui/packages/loss-summary`);
    expect(problems.take()).toEqual([]);
  });

  it('shows the README rendered, and its hostile script never runs', async () => {
    const readme = page.getByRole('region', { name: 'README' });
    await readme.getByRole('heading', { level: 1, name: 'Loss summary' }).waitFor();
    expect(await readme.getByRole('listitem').allTextContents()).toEqual(['reads the first notice', 'writes the summary']);
    const link = readme.getByRole('link', { name: 'the claims guide' });
    expect(await link.getAttribute('href')).toBe('https://example.com/claims-guide');
    expect(await link.getAttribute('rel')).toBe('nofollow noopener');
    // The hostile parts are plain text on the page: no element, no handler, no javascript: link.
    expect(await readme.textContent()).toContain('<script>window.pwned = true; alert("pwned")</script>');
    expect(await readme.locator('script, img, iframe, [onerror]').count()).toBe(0);
    expect(await readme.getByRole('link', { name: 'click me' }).count()).toBe(0);
    expect(await page.evaluate('typeof window.pwned')).toBe('undefined');
    expect(dialogs).toEqual([]);
    expect(problems.take()).toEqual([]);
  });

  it('shows versions with their yank, security-yank and revocation state, owners, downloads and the install line', async () => {
    const row = (version: string) => page.locator(`tr[data-version="${version}"]`);
    expect(await row('1.2.0').textContent()).toMatch(/security-yanked[\s\S]*revoked/);
    expect(await row('1.2.0').locator('.badge', { hasText: 'security-yanked' }).getAttribute('title')).toContain('leaks claimant data');
    expect(await row('1.1.0').locator('.badge').allTextContents()).toEqual(['yanked']);
    expect(await row('1.0.0').textContent()).toContain('listed');
    expect(await row('1.0.0').locator('td').nth(3).textContent()).toBe('2');
    expect(await row('1.0.0').textContent()).toContain('by key:claims-ci');

    const about = page.getByRole('complementary', { name: 'About this package' });
    expect(await about.locator('ul.owners li').allTextContents()).toEqual(['key:claims-ci']);
    expect(await about.textContent()).toContain('3 in total');
    expect(await about.textContent()).toContain('latest: 1.0.0');

    const install = await page.getByLabel('Install request').textContent();
    expect(install).toBe('POST /catalog/install\n{"name":"loss-summary","version":"^1.0.0"}');
    expect(await page.getByLabel('Install with curl').textContent()).toContain(`-d '{"name":"loss-summary","version":"^1.0.0"}'`);
    await screenshot(page, SCREENSHOT_DIR, '02-package');
    expect(dialogs).toEqual([]);
    expect(problems.take()).toEqual([]);
  });

  it('shows the deprecation banner of a deprecated package, and a page for an unknown one', async () => {
    await page.goto(`${url}/ui/packages/loss-digest`);
    const banner = page.getByRole('note', { name: 'Deprecated' });
    expect(await banner.textContent()).toContain('use loss-summary instead');
    expect(await page.getByRole('region', { name: 'README' }).textContent()).toContain('This package has no README.');
    await screenshot(page, SCREENSHOT_DIR, '03-deprecated');
    expect(problems.take()).toEqual([]);

    const missing = await page.goto(`${url}/ui/packages/nothing-here`);
    expect(missing?.status()).toBe(404);
    await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    // Chromium logs the 404 of the document itself; nothing else.
    expect(problems.take().filter((p) => !p.includes('404'))).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
