import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitUntil } from '@agent-platform/testkit';
import { launchChromium, requireChromium, screenshot } from '@agent-platform/testkit/browser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, signInWithKey } from '../support/dashboard-browser.ts';
import { writeLicence } from '../support/fleet.ts';
import { ROOT, call, startConfiguredPlatform, type PlatformProcess } from '../support/platform-process.ts';

// The overview raises what needs a person (docs/dashboard.md "Needs attention"), in Debian's
// Chromium against a real all-in-one: first nothing, then a channel in Error, a transaction budget
// at 80 % and webhook deliveries dead-lettered, each a link to its page; a role sees only what it
// may read. The webhooks page lists the events given up on.
const chromiumPath = requireChromium();
const BUDGET = 5;

describe.skipIf(chromiumPath === null)('the dashboard overview: needs attention (Chromium)', () => {
  let dir: string;
  let platform: PlatformProcess;
  let base: string;
  let admin: string;
  let browser: Browser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-attention-'));
    const config = {
      server: { listen: `127.0.0.1:${await freePort()}` },
      surfaces: { dashboard: true },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      licence: await writeLicence(dir, { transaction_budgets: { claims_intake: BUDGET } }),
      network: { allow_private_targets: true },
      // One attempt per event: a delivery that fails is dead-lettered at once.
      webhooks: { max_attempts: 1 },
      logging: { level: 'warn' },
    };
    ({ platform, base } = await startConfiguredPlatform(dir, config));
    admin = (await call(base, 'POST', '/auth/keys', { body: { name: 'ops-admin', role: 'admin' } })).body.secret;
    browser = await launchChromium(chromiumPath!);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    platform?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  const attention = async (key: string, shot: string): Promise<{ text: string; links: Array<[string, string]>; reads: string[] }> => {
    const page = await (await browser.newContext()).newPage();
    const reads: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname !== '/dashboard/' && !url.pathname.startsWith('/dashboard/')) reads.push(`${url.pathname}${url.search}`);
    });
    await signInWithKey(page, base, key);
    const panel = page.getByRole('region', { name: 'Needs attention' });
    await panel.waitFor();
    await page.locator('.cards .card').first().waitFor();
    await screenshot(page, SCREENSHOT_DIR, shot);
    const text = (await panel.textContent()) ?? '';
    const links = await panel.locator('a').evaluateAll((as) => as.map((a) => [a.textContent ?? '', a.getAttribute('href') ?? ''] as [string, string]));
    await page.context().close();
    return { text, links, reads };
  };

  it('says nothing needs attention on a healthy platform', async () => {
    const { text, links, reads } = await attention(admin, 'attention-clear');
    expect(text).toContain('Nothing needs attention.');
    expect(links).toEqual([]);
    // The panel and the cards share one read of each route per load (the verify walks the chain).
    for (const path of ['/security/verify', '/licence/status', '/runs?state=Failed&limit=1000'])
      expect(reads.filter((r) => r === path), path).toHaveLength(1);
  });

  it('raises a channel in Error, a budget at 80 % and dead-lettered webhook deliveries, each linking to its page; a role that may not read them does not see them', async () => {
    const install = await call(base, 'POST', '/catalog/install', { token: admin, body: { path: join(ROOT, 'examples', 'claims-intake'), activate: true } });
    expect(install.status, install.text).toBe(201);
    const agent = install.body.installed.find((p: { name: string }) => p.name === 'claims-intake').id as string;
    // A webhook whose receiver is not there: each invocation's event is given up on.
    const receiver = `http://127.0.0.1:${await freePort()}/hooks`;
    const hook = await call(base, 'POST', '/webhooks', { token: admin, body: { agent_id: agent, url: receiver } });
    expect(hook.status, hook.text).toBe(201);
    // Invocations made for the workflow type are its transactions (docs/licence.md): 4 of 5.
    for (let i = 0; i < BUDGET - 1; i++) {
      const body = { source: 'Api', message: `claim ${i}`, correlation_id: `claim-${i}`, workflow_type: 'claims_intake' };
      expect((await call(base, 'POST', `/agents/${agent}/invoke`, { token: admin, body })).status).toBe(200);
    }
    // A Slack channel whose Web API does not answer: the bridge reports it in Error.
    const channel = await call(base, 'POST', '/channels', {
      token: admin,
      body: { id: 'slack-down', kind: 'slack', default_agent: agent, config: { bot_token: 'xoxb-test', signing_secret: 's3cret', api_base_url: `http://127.0.0.1:${await freePort()}/api` } },
    });
    expect(channel.status, channel.text).toBe(201);
    await waitUntil(async () => typeof (await call(base, 'GET', '/channels/slack-down', { token: admin })).body.status === 'object', { timeoutMs: 30_000, message: 'the channel in Error' });
    const deadLetters = async (): Promise<number> =>
      (await call(base, 'GET', `/webhooks/${hook.body.id}/deliveries?dead_letter=true`, { token: admin })).body.deliveries.length;
    await waitUntil(async () => (await deadLetters()) >= BUDGET - 1, { timeoutMs: 30_000, message: 'the invocations\' events dead-lettered' });
    const given = await deadLetters();

    const { text, links } = await attention(admin, 'attention-raised');
    expect(text).not.toContain('Nothing needs attention');
    expect(links).toEqual(
      expect.arrayContaining([
        [expect.stringMatching(/^Channel slack-down is in Error: /), '/dashboard/channels'],
        [`Transaction budget claims_intake: ${BUDGET - 1} of ${BUDGET} used`, '/dashboard/licence'],
        [`${given} webhook deliveries to ${receiver} dead-lettered in the last 24 hours`, '/dashboard/webhooks'],
      ]),
    );
    expect(links).toHaveLength(3);

    // The webhooks page names the events given up on, and what went wrong.
    const page = await (await browser.newContext()).newPage();
    await signInWithKey(page, base, admin);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    const dead = page.getByRole('table', { name: /given up on in the last 24 hours/ });
    await dead.waitFor();
    expect(await dead.getByRole('caption').textContent()).toBe(`${given} events given up on in the last 24 hours`);
    expect(await dead.locator('tbody tr').count()).toBe(given);
    expect(await dead.locator('tbody tr').first().textContent()).toContain('invocation.completed');
    const webhooks = page.getByRole('table', { name: '1 webhook' });
    expect(await webhooks.locator('tbody tr').first().textContent()).toContain(receiver);
    expect(await webhooks.locator('tbody tr').first().textContent()).toContain('claims-intake');
    await page.getByRole('button', { name: `Send a test delivery to ${receiver}` }).click();
    await page.getByRole('alert').filter({ hasText: `Test not delivered to ${receiver}` }).waitFor();
    await screenshot(page, SCREENSHOT_DIR, 'webhooks-dead-letters');
    await page.context().close();

    // A service key may read neither channels nor the licence (docs/permissions.md): its overview raises neither.
    const service = (await call(base, 'POST', '/auth/keys', { token: admin, body: { name: 'claims-bot', role: 'service' } })).body.secret as string;
    const seen = await attention(service, 'attention-service');
    expect(seen.links).toEqual([]);
  }, 120_000);

  it('stays usable on a phone-sized screen: only tables scroll sideways, and their actions can be reached', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await signInWithKey(page, base, admin);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await page.locator('table.data').first().waitFor();
    // The page itself never scrolls sideways; a wide table scrolls inside its own box. (Strings,
    // not functions: the tests are typechecked without the DOM library.)
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    const box = await page.evaluate<{ overflow: string; wide: boolean }>(
      "(() => { const w = document.querySelector('table.data').parentElement; return { overflow: getComputedStyle(w).overflowX, wide: w.scrollWidth > w.clientWidth }; })()",
    );
    expect(box.overflow).toBe('auto');
    const suspend = page.getByRole('button', { name: 'Suspend claims-intake' });
    await suspend.scrollIntoViewIfNeeded();
    const where = (await suspend.boundingBox())!;
    expect(where.x).toBeGreaterThanOrEqual(0);
    expect(where.x + where.width).toBeLessThanOrEqual(390);
    await screenshot(page, SCREENSHOT_DIR, 'narrow-agents');
    await context.close();
  }, 60_000);
});
