import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@agent-platform/testkit';
import { launchChromium, requireChromium, screenshot, watchPage } from '@agent-platform/testkit/browser';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, expectNamedControls, openPage } from '../support/dashboard-browser.ts';
import { ROOT, call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// docs/dashboard.md "Auth disabled": the boot gate (spec §Authentication rule 4) covers the
// dashboard, which is served on the api listener; on loopback with auth disabled the dashboard
// opens without sign-in, as the anonymous admin, and says so.
const chromiumPath = requireChromium();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-dashboard-off-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function configFile(name: string, document: Record<string, unknown>): Promise<string> {
  const path = join(dir, name);
  await writeFile(
    path,
    stringify({ storage: { data_dir: join(dir, `${name}-data`) }, logging: { level: 'warn' }, ...document }),
  );
  return path;
}

describe('the boot gate with the dashboard surface', () => {
  it('refuses to start the dashboard with auth disabled on a non-loopback bind, even with the api surface off', async () => {
    const path = await configFile('open.toml', {
      server: { listen: `0.0.0.0:${await freePort()}` },
      surfaces: { api: false, dashboard: true },
    });
    const platform = startPlatform(dir, ['--config', path]);
    const code = await platform.exited;
    expect(code).not.toBe(0);
    expect(platform.output()).toContain(
      'refusing to start: [auth] mode = "disabled" on the non-loopback address 0.0.0.0:',
    );
    expect(platform.output()).not.toMatch(/listening on/);
  });
});

describe.skipIf(chromiumPath === null)('the dashboard with auth disabled on loopback', () => {
  let platform: PlatformProcess;
  let base: string;

  beforeAll(async () => {
    const path = await configFile('loopback.toml', {
      server: { listen: `127.0.0.1:${await freePort()}` },
      surfaces: { dashboard: true },
    });
    platform = startPlatform(dir, ['--config', path]);
    base = await platform.listening(60_000);
    expect(
      (
        await call(base, 'POST', '/catalog/install', {
          body: { path: join(ROOT, 'examples', 'claims-intake') },
        })
      ).status,
    ).toBe(201);
  }, 120_000);
  afterAll(async () => {
    platform?.kill();
    await platform?.exited;
  });

  it('opens without a sign-in, as the anonymous admin, and warns that everyone is an admin', async () => {
    const browser = await launchChromium(chromiumPath!);
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const problems = await watchPage(context);
      const page = await context.newPage();
      await page.goto(`${base}/dashboard/`);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      expect(await page.locator('.topbar').textContent()).toContain(
        'Authentication is off: everyone who reaches this address is an admin',
      );
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
      await openPage(page, 'Agents');
      await page.getByRole('button', { name: 'Activate claims-intake' }).click();
      await expect
        .poll(() => page.getByRole('row', { name: /Claims intake/ }).textContent())
        .toMatch(/Running/);
      await screenshot(page, SCREENSHOT_DIR, '30-auth-off-agents');
      await expectNamedControls(page);
      expect(problems.list()).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
