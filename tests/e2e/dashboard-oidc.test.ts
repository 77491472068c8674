import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOidcProvider, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { freePort } from '@agent-platform/testkit';
import { launchChromium, requireChromium, screenshot, watchPage } from '@agent-platform/testkit/browser';
import type { Browser } from 'playwright-core';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, expectNamedControls } from '../support/dashboard-browser.ts';
import { writeLicence } from '../support/fleet.ts';
import { ROOT, call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// docs/dashboard.md "Signing in through the identity provider": the authorization code flow with
// PKCE from Chromium to a real OpenID provider (oidc-provider on loopback) and back, the access
// token then used as the bearer of every api call, its roles mapped by [auth.oidc] role_mapping.
const chromiumPath = requireChromium();
const CLIENT_ID = 'agent-dashboard';

describe.skipIf(chromiumPath === null)('dashboard sign-in through the OIDC provider', () => {
  let dir: string;
  let idp: OidcProviderHarness;
  let platform: PlatformProcess;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-dashboard-oidc-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider({
      audience: base,
      clients: { 'ops-bot': { roles: ['platform-admins'] } },
      publicClients: { [CLIENT_ID]: { redirectUris: [`${base}/dashboard/callback`] } },
      users: { dana: { roles: ['platform-ops'] }, guest: { roles: ['visitors'] } },
    });
    const config = {
      server: { listen: `127.0.0.1:${port}` },
      surfaces: { dashboard: true },
      storage: { data_dir: join(dir, 'data') },
      auth: {
        mode: 'oidc',
        oidc: {
          issuer: idp.issuer,
          audience: base,
          role_claim: 'realm_access.roles',
          role_mapping: { 'platform-admins': 'admin', 'platform-ops': 'operator' },
        },
      },
      dashboard: { oidc_client_id: CLIENT_ID },
      licence: await writeLicence(dir, {}),
      logging: { level: 'warn' },
    };
    await writeFile(join(dir, 'agent-platform.toml'), stringify(config));
    platform = startPlatform(dir, ['--config', join(dir, 'agent-platform.toml')]);
    expect(await platform.listening(60_000)).toBe(base);
    // A machine client of the provider installs an agent, as a deployment pipeline would.
    const install = await call(base, 'POST', '/catalog/install', {
      token: await idp.accessToken('ops-bot'),
      body: { path: join(ROOT, 'examples', 'policy-servicing'), activate: true },
    });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    browser = await launchChromium(chromiumPath!);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    platform?.kill();
    await platform?.exited;
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('signs a person in at the provider and brings them back to the page they asked for, with their role', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const problems = await watchPage(context);
    const page = await context.newPage();
    try {
      const response = await page.goto(`${base}/dashboard/agents`);
      // The page may call the issuer (discovery, token endpoint) and nothing else.
      expect((await response!.allHeaders())['content-security-policy']).toContain(
        `connect-src 'self' ${idp.issuer};`,
      );
      const host = new URL(idp.issuer).host;
      await page.getByRole('button', { name: `Sign in with ${host}` }).click();
      await page.waitForURL(`${idp.issuer}/interaction/**`);
      await screenshot(page, SCREENSHOT_DIR, '20-oidc-provider-login');
      await page.getByLabel('Username').fill('dana');
      await page.getByRole('button', { name: 'Continue' }).click();

      await page.waitForURL(`${base}/dashboard/agents`);
      await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
      await expect.poll(() => page.locator('.topbar').textContent()).toContain('Signed in as oidc:dana');
      expect(await page.locator('.topbar .badge').textContent()).toBe('operator');
      // The provider's code and state are gone from the address bar; the token is in this tab only.
      expect(page.url()).toBe(`${base}/dashboard/agents`);
      expect(await page.evaluate('Object.keys(sessionStorage)')).toEqual(['agent-platform.dashboard.token']);

      // An operator may suspend: the access token is the bearer of the call.
      await page.getByRole('button', { name: 'Suspend policy-servicing' }).click();
      await expect
        .poll(() => page.getByRole('row', { name: /Policy servicing/ }).textContent())
        .toMatch(/Suspended/);
      const audit = await call(base, 'GET', '/security/audit?category=agents&limit=5', {
        token: await idp.accessToken('ops-bot'),
      });
      expect(audit.body.entries[0]).toMatchObject({
        identity: 'oidc:dana',
        role: 'operator',
        action: 'POST /agents/:id/suspend',
      });
      await screenshot(page, SCREENSHOT_DIR, '21-oidc-signed-in');
      await expectNamedControls(page);
      // An operator does not read compliance reports: no entry for it.
      expect(
        await page
          .getByRole('navigation', { name: 'Dashboard' })
          .getByRole('link', { name: 'Compliance' })
          .count(),
      ).toBe(0);
      expect(problems.list()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('refuses a person whose token maps to no role, saying why, and keeps no token', async () => {
    const context = await browser.newContext();
    const problems = await watchPage(context);
    const page = await context.newPage();
    try {
      await page.goto(`${base}/dashboard/`);
      await page.getByRole('button', { name: /^Sign in with / }).click();
      await page.getByLabel('Username').fill('guest');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${base}/dashboard/`);
      await expect
        .poll(() => page.locator('.sign-in').textContent())
        .toContain('carries no role this service maps');
      expect(await page.evaluate("sessionStorage.getItem('agent-platform.dashboard.token')")).toBeNull();
      // Chromium logs the refused /auth/whoami (403); nothing else went wrong.
      expect(problems.list()).toEqual([expect.stringMatching(/403/)]);
    } finally {
      await context.close();
    }
  });

  it('says so when the provider sends the browser back without a sign-in in progress', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/dashboard/callback?code=forged&state=forged`);
      await expect
        .poll(() => page.locator('.sign-in').textContent())
        .toContain('no sign-in was in progress in this tab');
      expect(page.url()).toBe(`${base}/dashboard/`);
    } finally {
      await context.close();
    }
  });
});
