import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSmtpPeer, type SmtpPeer } from '@agent-platform/channels/testing';
import { freePort, startFakeOpenAiServer, waitUntil, type FakeOpenAiServer } from '@agent-platform/testkit';
import {
  launchChromium,
  requireChromium,
  screenshot,
  watchPage,
  type PageProblems,
} from '@agent-platform/testkit/browser';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SCREENSHOT_DIR,
  expectNamedControls,
  openPage,
  signInWithKey,
  tabThrough,
} from '../support/dashboard-browser.ts';
import { startClaimsSystem, type ExampleServer } from '../support/claims-example.ts';
import { echoReply, writeLicence } from '../support/fleet.ts';
import {
  claimsReply,
  installClaimsHandler,
  setClaimsDelay,
  writeClaimWorkflow,
} from '../support/journal-kit.ts';
import { ROOT, call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// Issue 14 item 2: the dashboard as a person uses it, in Debian's Chromium, against a real
// all-in-one platform: sign-in, every page with real data, an action per page, a workflow run
// watched to completion live, a viewer without the buttons, keyboard and labels, the CSP, and no
// console error or CSP violation anywhere. Screenshots land in .tmp/dashboard-screenshots/.
const chromiumPath = requireChromium();
const EXAMPLES = join(ROOT, 'examples');
/** Each model call of a step takes this long, so that a run can be watched step by step. */
const STEP_MS = 700;
/** Inputs of the claims handler: the model stand-in looks the policy up and opens a claim. */
const OPEN_CLAIM = 'open a claim for policy';

describe.skipIf(chromiumPath === null)('the dashboard in Chromium (all-in-one, auth local)', () => {
  let dir: string;
  let model: FakeOpenAiServer;
  let smtp: SmtpPeer;
  let claims: ExampleServer;
  let platform: PlatformProcess;
  let base: string;
  let admin: string;
  let viewer: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: PageProblems;
  let complianceRoutes: boolean;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-dashboard-'));
    // A model stand-in: echoes, slowly; an input saying SLOW hangs until cancelled; one asking to
    // open a claim gets the claims handler's tool calls (a policy lookup, then open_claim).
    const openClaim = claimsReply({ finalDelayMs: 0 });
    model = await startFakeOpenAiServer({
      fallback: (request) =>
        JSON.stringify(request.body).includes(OPEN_CLAIM)
          ? openClaim(request)
          : {
              ...echoReply(request),
              delay_ms: JSON.stringify(request.body).includes('SLOW') ? 120_000 : STEP_MS,
            },
    });
    smtp = await startSmtpPeer();
    // The example claims system (an MCP server): a system of record that open_claim changes.
    claims = await startClaimsSystem(join(dir, 'claims-ledger.jsonl'));
    const port = await freePort();
    const config = {
      server: { listen: `127.0.0.1:${port}` },
      surfaces: { dashboard: true },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      licence: await writeLicence(dir, { transaction_budgets: { claims_intake: 40 } }),
      providers: [{ id: 'fake', kind: 'openai', base_url: model.url, models: ['m'] }],
      models: { default: 'fake/m' },
      network: { allow_private_targets: true },
      connectors: { urls: { 'claims-system': model.url, crm: `http://127.0.0.1:${await freePort()}/` } },
      logging: { level: 'warn' },
    };
    await writeFile(join(dir, 'agent-platform.toml'), stringify(config));
    platform = startPlatform(dir, ['--config', join(dir, 'agent-platform.toml')]);
    base = await platform.listening(60_000);

    admin = (await call(base, 'POST', '/auth/keys', { body: { name: 'ops-admin', role: 'admin' } })).body
      .secret;
    viewer = (
      await call(base, 'POST', '/auth/keys', {
        token: admin,
        body: { name: 'claims-viewer', role: 'viewer' },
      })
    ).body.secret;
    const install = await call(base, 'POST', '/catalog/install', {
      token: admin,
      body: { path: join(EXAMPLES, 'claims-review'), activate: true },
    });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    const agents: Array<{ id: string; name: string }> = (await call(base, 'GET', '/agents', { token: admin }))
      .body.agents;
    const intake = agents.find((a) => a.name === 'claims-intake')!;
    const schedule = await call(base, 'POST', `/agents/${intake.id}/schedules`, {
      token: admin,
      body: { expression: '0 3 * * *', prompt: 'Summarise the claims that came in overnight.' },
    });
    expect(schedule.status).toBe(201);
    expect((await call(base, 'POST', `/cron/jobs/${schedule.body.id}/run`, { token: admin })).status).toBe(
      200,
    );
    const channel = await call(base, 'POST', '/channels', {
      token: admin,
      body: {
        id: 'claims-mail',
        kind: 'email',
        default_agent: intake.id,
        config: { smtp_host: smtp.host, smtp_port: smtp.port, from: 'claims@example.com' },
      },
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    // One run before anyone looks: the runs list and the value-event chart have something to show.
    const workflow = install.body.installed.find((p: { type: string }) => p.type === 'workflow-template').id;
    const first = await call(base, 'POST', `/workflows/${workflow}/run`, {
      token: admin,
      body: { input: 'Kitchen flood at 12 Elm St, policy HO-1001.' },
    });
    await waitUntil(
      async () =>
        (await call(base, 'GET', `/runs/${first.body.id}`, { token: admin })).body.state === 'Completed',
      { timeoutMs: 30_000 },
    );
    // A trail long enough to page through (25 entries a page).
    for (let i = 0; i < 30; i++)
      await call(base, 'POST', '/audit/append', {
        token: admin,
        body: { event_type: 'claims.review.note', detail: `note ${i}` },
      });
    complianceRoutes = (await call(base, 'GET', '/compliance/packs', { token: admin })).status === 200;

    browser = await launchChromium(chromiumPath!);
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    problems = await watchPage(context);
    page = await context.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    platform?.kill();
    await platform?.exited;
    await Promise.all([model?.close(), smtp?.close(), claims?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the page with a strict Content-Security-Policy and no inline code', async () => {
    const response = await page.goto(`${base}/dashboard/`);
    expect(response?.status()).toBe(200);
    const csp = (await response!.allHeaders())['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    await page.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
    await screenshot(page, SCREENSHOT_DIR, '01-sign-in');
    expect(problems.take()).toEqual([]);
  });

  it("refuses a wrong key with the api's message and keeps the person on the form", async () => {
    await page.getByRole('textbox', { name: 'API key' }).fill('svc_sk_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('invalid, revoked or expired API key');
    await expect.poll(() => page.locator(':focus').getAttribute('name')).toBe('token');
    await screenshot(page, SCREENSHOT_DIR, '02-sign-in-refused');
    // The one failed request is the refused /auth/whoami, which Chromium logs; nothing else.
    expect(problems.take()).toEqual([expect.stringMatching(/401/)]);
  });

  it('signs in with a key and shows the platform at a glance', async () => {
    await page.getByRole('textbox', { name: 'API key' }).fill(admin);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect.poll(() => page.locator('.topbar').textContent()).toContain('Signed in as ops-admin');
    const cards = page.locator('ul.cards');
    // The overview makes a dozen reads (the attention checks among them): give it the time they take.
    await expect.poll(() => cards.textContent(), { timeout: 15_000 }).toMatch(/2 of 2 running/);
    await expect.poll(() => cards.textContent()).toMatch(/chain holds/);
    await expect.poll(() => cards.textContent()).toMatch(/\d+ days left/);
    await screenshot(page, SCREENSHOT_DIR, '03-overview');
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('reaches every control by keyboard in order, with a visible focus ring, and skips to the content', async () => {
    await openPage(page, 'Agents');
    // Tabbing starts from the top of a freshly loaded page.
    await page.reload();
    await page.getByRole('button', { name: 'Suspend policy-servicing' }).waitFor();
    const stops = await tabThrough(page, 16);
    expect(stops.map((s) => s.name)).toEqual([
      'a:Skip to content',
      'a:Agent Platform',
      'button:Sign out',
      'a:Overview',
      'a:Agents',
      'a:Workflow runs',
      'a:Schedules',
      'a:Channels',
      'a:Integrations',
      'a:Webhooks',
      'a:Audit trail',
      'a:Licence and usage',
      'a:Compliance',
      'button:Refresh agents',
      'button:Suspend claims-intake',
      'button:Suspend policy-servicing',
    ]);
    expect(stops.filter((s) => !s.visible)).toEqual([]);
    await page.reload();
    await page.getByRole('button', { name: 'Suspend policy-servicing' }).waitFor();
    expect((await tabThrough(page, 1))[0]!.name).toBe('a:Skip to content');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator(':focus').getAttribute('id')).toBe('main');
    expect(problems.take()).toEqual([]);
  });

  it('agents: shows state and counters; suspends and activates an agent', async () => {
    const row = page.getByRole('row', { name: /Claims intake/ });
    await expect.poll(() => row.textContent()).toMatch(/Running/);
    await screenshot(page, SCREENSHOT_DIR, '04-agents');
    await page.getByRole('button', { name: 'Suspend claims-intake' }).click();
    await expect.poll(() => row.textContent()).toMatch(/Suspended/);
    await expect
      .poll(() => page.getByRole('status').last().textContent())
      .toContain('claims-intake suspended');
    const agents = (await call(base, 'GET', '/agents', { token: admin })).body.agents;
    expect(agents.find((a: { name: string }) => a.name === 'claims-intake').state).toBe('Suspended');
    await page.getByRole('button', { name: 'Activate claims-intake' }).click();
    await expect.poll(() => row.textContent()).toMatch(/Running/);
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('runs: starts a run and watches it complete live, step by step, from the event stream', async () => {
    await openPage(page, 'Workflow runs');
    await expectNamedControls(page);
    await page.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'claims-review' });
    await page
      .getByRole('textbox', { name: 'Input' })
      .fill('Hail damage to the roof at 4 Oak Ave, policy HO-2002.');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/dashboard\/runs\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { level: 1, name: 'Run of claims-review' }).waitFor();
    // A marker on the window: if the page were reloaded to show progress, it would be gone.
    await page.evaluate('window.stayed = true');
    const state = page.locator('dd').first();
    const steps = page.locator('ol.steps > li');
    await expect.poll(() => page.locator('.live-indicator').textContent()).toMatch(/^Live:/);
    await steps.first().waitFor({ timeout: 20_000 });
    // The first step arrived while the run was still going: progress came live, not at the end.
    expect(await state.textContent()).toBe('Running');
    await screenshot(page, SCREENSHOT_DIR, '05-run-in-progress');
    await expect.poll(() => state.textContent(), { timeout: 30_000 }).toBe('Completed');
    expect(await steps.count()).toBe(5);
    // The Collect step ("findings") called no model: it says what it did, not "0 ms · 0 tokens".
    const findings = steps.filter({ has: page.locator('.step-head .name', { hasText: /^\d+\. findings$/ }) }).locator('.step-head');
    expect(await findings.textContent()).toContain('collects the outputs of the steps run in parallel before it (no model call)');
    expect(await findings.textContent()).not.toContain('tokens');
    expect(await steps.first().locator('.step-head').textContent()).toMatch(/tokens/);
    // <progress> reflects value and max as attributes.
    const progress = page.locator('progress');
    expect([await progress.getAttribute('value'), await progress.getAttribute('max')]).toEqual(['5', '5']);
    await page.getByText('The run has ended: Completed.').waitFor();
    expect(await page.evaluate('window.stayed')).toBe(true);
    await expect
      .poll(() => page.locator('dd pre').nth(1).textContent())
      .toContain('Recommend the next action');
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    // Its agents changed nothing in a system of record: no journal to show.
    expect(await page.getByRole('heading', { name: 'Tool calls' }).count()).toBe(0);
    await screenshot(page, SCREENSHOT_DIR, '06-run-completed');
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('runs: cancels a run stuck on a slow model call, and filters the list by state', async () => {
    await openPage(page, 'Workflow runs');
    await page.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'claims-review' });
    await page.getByRole('textbox', { name: 'Input' }).fill('SLOW: a claim the model takes forever over');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const state = page.locator('dd').first();
    await expect.poll(() => state.textContent(), { timeout: 20_000 }).toBe('Failed');
    await expect.poll(() => page.locator('dl.facts').textContent()).toContain('cancelled by ops-admin');

    await page.getByRole('link', { name: 'All runs' }).click();
    await page.getByRole('combobox', { name: 'Show runs in state' }).selectOption('Failed');
    const table = page.getByRole('table', { name: /in state Failed/ });
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    expect(page.url()).toContain('?state=Failed');
    await page.getByRole('combobox', { name: 'Show runs in state' }).selectOption('');
    await expect.poll(() => page.getByRole('table', { name: /^3 runs$/ }).count()).toBe(1);
    await screenshot(page, SCREENSHOT_DIR, '07-runs');
    expect(problems.take()).toEqual([]);
  });

  it('schedules: next and last fire and missed slots; pauses and resumes a schedule', async () => {
    await openPage(page, 'Schedules');
    const row = page.getByRole('row', { name: /claims-intake/ });
    await expect.poll(() => row.textContent()).toMatch(/0 3 \* \* \* \(UTC\)/);
    const cells = row.getByRole('cell');
    // Cells after the row header: when, state, next fire, last fire, missed slots, recent fires.
    expect(await cells.nth(2).textContent()).not.toBe('—');
    expect(await cells.nth(3).textContent()).not.toBe('—');
    expect(await cells.nth(4).textContent()).toBe('0');
    expect(await cells.nth(5).textContent()).toMatch(/fired/);
    await screenshot(page, SCREENSHOT_DIR, '08-schedules');
    await page.getByRole('button', { name: 'Pause the schedule of claims-intake' }).click();
    await expect.poll(() => row.textContent()).toMatch(/paused/);
    expect((await call(base, 'GET', '/cron/jobs', { token: admin })).body.jobs[0].enabled).toBe(false);
    await page.getByRole('button', { name: 'Resume the schedule of claims-intake' }).click();
    await expect.poll(() => row.textContent()).toMatch(/enabled/);
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('channels: status and destination; disables and enables a channel', async () => {
    await openPage(page, 'Channels');
    const row = page.getByRole('row', { name: /claims-mail/ });
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/Connected/);
    expect(await row.textContent()).toContain('agent claims-intake');
    await screenshot(page, SCREENSHOT_DIR, '09-channels');
    await page.getByRole('button', { name: 'Disable channel claims-mail' }).click();
    await expect.poll(() => row.textContent()).toMatch(/Disabled/);
    await page.getByRole('button', { name: 'Enable channel claims-mail' }).click();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/Connected/);
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('integrations: connector health probed on demand', async () => {
    await openPage(page, 'Integrations');
    await expect
      .poll(() => page.getByRole('row', { name: /Claims system/ }).textContent())
      .toMatch(/Healthy/);
    await expect.poll(() => page.getByRole('row', { name: /CRM/ }).textContent()).toMatch(/Unreachable/);
    // Not configured is said as what it is (nothing probed), not as a failure beside a running integration.
    await expect
      .poll(() => page.getByRole('row', { name: /Payments/ }).textContent())
      .toMatch(/Not probed.*no health URL in \[connectors\] urls/);
    expect(await page.getByRole('region', { name: 'Connector health' }).textContent()).toContain('These probes are not the integrations above');
    await page.getByRole('button', { name: 'Check connector health again' }).click();
    await page.getByText('Connector health updated.').waitFor();
    await screenshot(page, SCREENSHOT_DIR, '10-integrations');
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('audit: verifies the chain, filters and pages through the trail', async () => {
    await openPage(page, 'Audit trail');
    await page.getByRole('button', { name: 'Verify the audit chain' }).click();
    await expect.poll(() => page.locator('.verify').textContent()).toContain('The chain holds');
    // The page says which walk ran; the full one re-hashes every entry from the first.
    await page.getByRole('button', { name: 'Verify every entry of the audit chain from the first' }).click();
    await expect.poll(() => page.locator('.verify .walk').textContent()).toMatch(/^Full verification: every entry re-hashed from the first \((\d[\d,]*) of \1\)\.$/);
    await page.getByRole('button', { name: 'Verify the audit chain' }).click();
    await expect.poll(() => page.locator('.verify .walk').textContent()).toMatch(/^Quick verification: /);
    await page.getByRole('combobox', { name: 'Category' }).selectOption('workflows');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const table = page.getByRole('table', { name: /matching entr/ });
    await expect.poll(() => table.textContent()).toContain('POST /runs/:id/cancel');
    expect(await table.textContent()).not.toContain('POST /catalog/install');
    await page.getByRole('combobox', { name: 'Category' }).selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const pager = page.getByRole('navigation', { name: 'Audit pages' });
    await expect.poll(() => pager.textContent()).toMatch(/Page 1 of [2-9]/);
    const firstSeq = await table.getByRole('rowheader').first().textContent();
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => pager.textContent()).toMatch(/Page 2 of/);
    expect(Number(await table.getByRole('rowheader').first().textContent())).toBe(Number(firstSeq) - 25);
    await screenshot(page, SCREENSHOT_DIR, '11-audit');
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('licence and usage: the licence, its budgets and the weekly value-event chart', async () => {
    await openPage(page, 'Licence and usage');
    await expect
      .poll(() => page.locator('dl.facts').first().textContent())
      .toContain('Fleet Mutual (fleet-mutual)');
    const meter = page.getByRole('meter', { name: 'claims_intake' });
    // Three runs started: two completed and one cancelled, whose transaction was given back.
    expect(Number(await meter.getAttribute('value'))).toBe(2);
    expect(Number(await meter.getAttribute('max'))).toBe(40);
    const chart = page.getByRole('img', { name: /Value events per week, last 12 weeks/ });
    await chart.waitFor();
    expect(await chart.locator('rect').count()).toBe(12);
    await expect
      .poll(() => page.getByRole('table', { name: 'By solution' }).textContent())
      .toMatch(/claims_intake\s*2/);
    await screenshot(page, SCREENSHOT_DIR, '12-licence');
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('compliance: the packs, a report, and its PDF download (or "not available" without the routes)', async () => {
    await openPage(page, 'Compliance');
    if (!complianceRoutes) {
      await expect
        .poll(() => page.locator('#page').textContent())
        .toContain('Compliance reports are not available on this platform');
      await screenshot(page, SCREENSHOT_DIR, '13-compliance');
      // The 404 of GET /compliance/packs, logged by Chromium; the page handled it.
      expect(problems.take()).toEqual([expect.stringMatching(/404/)]);
      return;
    }
    const packs = page.getByRole('table', { name: /packs?$/ });
    await packs.getByRole('row').nth(1).waitFor();
    const firstPack = (await packs.getByRole('rowheader').first().locator('.name').textContent())!;
    await page.getByRole('button', { name: `View the ${firstPack} report` }).click();
    await expect
      .poll(() => page.getByRole('heading', { level: 2, name: `Report: ${firstPack}` }).count())
      .toBe(1);
    await expect.poll(() => page.locator('#page').textContent()).toMatch(/\d+ satisfied/);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download the ${firstPack} report as PDF` }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^compliance-report-[a-z0-9._-]+\.pdf$/);
    const bytes = await readFile(await file.path());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    await screenshot(page, SCREENSHOT_DIR, '13-compliance');
    await expectNamedControls(page);
    expect(problems.take()).toEqual([]);
  });

  it('a viewer sees the pages but none of the buttons, and the api refuses the action anyway', async () => {
    const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const viewerProblems = await watchPage(viewerContext);
    const viewerPage = await viewerContext.newPage();
    try {
      await signInWithKey(viewerPage, base, viewer);
      const nav = viewerPage.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.getByRole('link').allTextContents()).toEqual([
        'Overview',
        'Agents',
        'Workflow runs',
        'Schedules',
        'Channels',
        'Integrations',
        'Webhooks',
        'Audit trail',
        'Licence and usage',
      ]);
      await openPage(viewerPage, 'Agents');
      await viewerPage.getByRole('row', { name: /Claims intake/ }).waitFor();
      expect(await viewerPage.getByRole('button', { name: /^(Suspend|Activate) / }).count()).toBe(0);
      await screenshot(viewerPage, SCREENSHOT_DIR, '14-viewer-agents');
      await openPage(viewerPage, 'Workflow runs');
      expect(await viewerPage.getByRole('heading', { name: 'Start a run' }).count()).toBe(0);
      await viewerPage
        .getByRole('link', { name: /claims-review/ })
        .first()
        .click();
      await viewerPage.getByText(/The run has ended|Live: following/).waitFor();
      expect(await viewerPage.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
      await openPage(viewerPage, 'Schedules');
      await viewerPage.getByRole('row', { name: /claims-intake/ }).waitFor();
      expect(await viewerPage.getByRole('button', { name: /^(Pause|Resume) / }).count()).toBe(0);
      await openPage(viewerPage, 'Audit trail');
      await viewerPage.getByRole('button', { name: 'Verify the audit chain' }).waitFor();
      await expect
        .poll(() => viewerPage.locator('#page').textContent())
        .toContain('Reading the audit trail needs the admin, auditor roles.');
      expect(viewerProblems.take()).toEqual([]);

      const intake = (await call(base, 'GET', '/agents', { token: viewer })).body.agents.find(
        (a: { name: string }) => a.name === 'claims-intake',
      );
      expect((await call(base, 'POST', `/agents/${intake.id}/suspend`, { token: viewer })).status).toBe(403);

      // The key is revoked: the next call signs the viewer out with the api's reason.
      const keys = (await call(base, 'GET', '/auth/keys', { token: admin })).body.keys;
      await call(
        base,
        'DELETE',
        `/auth/keys/${keys.find((k: { name: string }) => k.name === 'claims-viewer').id}`,
        { token: admin },
      );
      await viewerPage
        .getByRole('navigation', { name: 'Dashboard' })
        .getByRole('link', { name: 'Agents', exact: true })
        .click();
      await viewerPage.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
      await expect
        .poll(() => viewerPage.locator('.sign-in').textContent())
        .toContain('You were signed out: invalid, revoked or expired API key');
      expect(viewerProblems.take().every((p) => p.includes('401'))).toBe(true);
    } finally {
      await viewerContext.close();
    }
  });

  // Last but one: the claims handler and its workflows would change the agent and run counts the
  // pages above assert.
  it('runs: the tool calls of a run with their keys, live, and an Escalated run naming the key to look up', async () => {
    const packages = join(dir, 'packages');
    await installClaimsHandler(base, admin, packages, claims.url);
    const workflows = [
      await writeClaimWorkflow(packages, 'open-claim'),
      // The claims system holds its answer past the step's timeout below: the call is cut off,
      // its outcome unknown, and the retry escalates instead of opening the claim again.
      await writeClaimWorkflow(packages, 'open-claim-or-escalate', {
        timeout_secs: 8,
        error_mode: { Retry: { max_retries: 1 } },
      }),
    ];
    for (const path of workflows) {
      const installed = await call(base, 'POST', '/catalog/install', { token: admin, body: { path } });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    }
    const startRun = async (workflow: string, input: string): Promise<string> => {
      await openPage(page, 'Workflow runs');
      await page.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: workflow });
      await page.getByRole('textbox', { name: 'Input' }).fill(input);
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.waitForURL(/\/dashboard\/runs\/[0-9a-f-]{36}$/);
      await page.getByRole('heading', { level: 1, name: `Run of ${workflow}` }).waitFor();
      return page.url().split('/').at(-1)!;
    };
    const state = page.locator('dd').first();
    const journal = page.getByRole('table', { name: /state-changing tool call/ });
    const escalation = page.getByRole('region', { name: /^Escalated/ });

    // A claim opened: open_claim answered, under the key the claims system saw.
    let runId = await startRun('open-claim', `${OPEN_CLAIM} HO-1234: a pipe burst in the kitchen`);
    await page.getByText(/The run has ended/).waitFor({ timeout: 30_000 });
    expect(await state.textContent(), (await page.locator('dl.facts').textContent()) ?? '').toBe('Completed');
    let key = `${runId}:0.0:0`;
    let row = journal.getByRole('row', { name: key });
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 10_000 }).toBe('answered');
    expect(await row.locator('code').textContent()).toBe(key);
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'open',
      expect.stringContaining('open_claim'),
      expect.stringContaining('claims-system'),
      'answered',
      expect.stringMatching(/\d.*sent .*\d/),
      '0',
    ]);
    expect(await escalation.count()).toBe(0);
    await screenshot(page, SCREENSHOT_DIR, '15-run-tool-calls');
    await expectNamedControls(page);

    // The claims system now holds its answer: the step times out with open_claim in flight.
    await setClaimsDelay(claims.url, 60_000);
    try {
      runId = await startRun('open-claim-or-escalate', `${OPEN_CLAIM} HO-1234: a tree fell on the garage`);
      await page.evaluate('window.stayed = true');
      key = `${runId}:0.0:0`;
      row = journal.getByRole('row', { name: key });
      // Seen while the call is on its way, then cut off: both from the event stream.
      await expect.poll(() => row.locator('.badge').textContent(), { timeout: 7_000 }).toBe('started');
      await screenshot(page, SCREENSHOT_DIR, '16-run-call-in-flight');
      await expect.poll(() => row.locator('.badge').textContent(), { timeout: 30_000 }).toBe('unknown');
      await expect.poll(() => state.textContent(), { timeout: 30_000 }).toBe('Escalated');
      await expect
        .poll(() => escalation.textContent(), { timeout: 10_000 })
        .toContain('Look this key up in the system of record');
      expect(await escalation.getByRole('listitem').allTextContents()).toEqual([
        expect.stringMatching(new RegExp(`^open_claim.*Key${key}Copy key$`)),
      ]);
      expect(await page.evaluate('window.stayed')).toBe(true);
      // The notice comes before everything else the page shows about the run.
      expect(await page.locator('#page section h2').first().textContent()).toMatch(/^Escalated/);
      const run = (await call(base, 'GET', `/runs/${runId}`, { token: admin })).body;
      expect(run.escalation.calls.map((c: { idempotency_key: string }) => c.idempotency_key)).toEqual([key]);

      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await escalation.getByRole('button', { name: 'Copy the key of open_claim' }).click();
      await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(key);
      await page.getByText(`Key ${key} copied.`).waitFor();
      await screenshot(page, SCREENSHOT_DIR, '17-run-escalated');
      await expectNamedControls(page);
      expect(problems.take()).toEqual([]);
    } finally {
      await setClaimsDelay(claims.url, 0);
    }
  });

  it('signs out: the tab forgets the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Agent Platform' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByRole('textbox', { name: 'API key' }).waitFor();
    expect(problems.list().filter((p) => p.startsWith('csp:'))).toEqual([]);
    expect(problems.take()).toEqual([]);
  });
});
