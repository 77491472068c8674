import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@agent-platform/testkit';
import { launchChromium, requireChromium, screenshot } from '@agent-platform/testkit/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR } from '../support/dashboard-browser.ts';
import { writeLicence } from '../support/fleet.ts';
import { call, startConfiguredPlatform, type PlatformProcess } from '../support/platform-process.ts';

// Swagger UI as a new user opens it (docs/http.md "OpenAPI and Swagger UI"): in Debian's
// Chromium, with no credential: the page renders the API, the Authorize button takes a key, and
// "Execute" on GET /auth/whoami answers 200 with that key's identity. The browser's automatic
// /favicon.ico is not a failed authentication in the audit trail.
const chromiumPath = requireChromium();

describe.skipIf(chromiumPath === null)('Swagger UI in Chromium (all-in-one, auth local)', () => {
  let dir: string;
  let platform: PlatformProcess;
  let base: string;
  let admin: string;
  let browser: Browser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-swagger-'));
    const config = {
      server: { listen: `127.0.0.1:${await freePort()}` },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      licence: await writeLicence(dir, {}),
      logging: { level: 'warn' },
    };
    ({ platform, base } = await startConfiguredPlatform(dir, config));
    admin = (await call(base, 'POST', '/auth/keys', { body: { name: 'docs-reader', role: 'admin' } })).body.secret;
    browser = await launchChromium(chromiumPath!);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    platform?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('opens without a key, takes one under Authorize, and runs a request with it', async () => {
    const page = await (await browser.newContext()).newPage();
    const unauthorized: string[] = [];
    page.on('response', (res) => {
      if (res.status() === 401) unauthorized.push(res.url());
    });
    await page.goto(`${base}/docs/`);
    await page.locator('.swagger-ui .info .title').filter({ hasText: 'Agent Platform API' }).waitFor({ timeout: 30_000 });
    const whoami = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/auth\/whoami$/ }) });
    await whoami.first().waitFor();

    // Unauthorized first: the same request without the key is the API's 401.
    await whoami.locator('.opblock-summary').first().click();
    await whoami.locator('button.execute').first().click();
    await expect.poll(() => whoami.locator('.live-responses-table tbody .response-col_status').first().textContent()).toContain('401');

    await page.locator('button.authorize').first().click();
    await page.locator('.auth-container input').first().fill(admin);
    await page.locator('.auth-btn-wrapper button.authorize').first().click();
    await page.locator('.auth-btn-wrapper button.btn-done').first().click();
    await whoami.locator('button.execute').first().click();
    await expect.poll(() => whoami.locator('.live-responses-table tbody .response-col_status').first().textContent()).toContain('200');
    expect(await whoami.locator('.live-responses-table tbody .response-col_description').first().textContent()).toContain('docs-reader');
    await screenshot(page, SCREENSHOT_DIR, 'swagger-ui-whoami');

    // Only the deliberate request went out without a key: the page, its assets, the document and the favicon did not need one.
    expect(unauthorized.map((url) => new URL(url).pathname)).toEqual(['/auth/whoami']);
    const audit = await call(base, 'GET', '/security/audit?limit=100', { token: admin });
    const targets = (audit.body.entries as Array<{ target: string; result: string }>).filter((e) => e.result === 'failure').map((e) => e.target);
    expect(targets).toEqual(['/auth/whoami']);
  }, 120_000);
});
