import { join } from 'node:path';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import {
  launchChromium,
  requireChromium,
  screenshot,
  watchPage,
  type PageProblems,
} from '@agent-platform/testkit/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SCREENSHOT_DIR,
  expectNamedControls,
  openPage,
  signInWithKey,
} from '../support/dashboard-browser.ts';
import { echoReply, pidOwningPort, startFleet, type Fleet } from '../support/fleet.ts';
import { ROOT, call } from '../support/platform-process.ts';

// The dashboard served by an api node of a fleet (NATS + Redis + the shared embedded store) while
// the run it shows executes on agent workers; the worker running a step is SIGKILLed mid-call,
// the other takes the step over (docs/workflows.md "Crash safety"), and the page, following the
// run event stream of its api node, shows the run through to Completed and stays usable.
const chromiumPath = requireChromium();
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
/** Long enough for the test to find the worker holding a call and kill it before it answers. */
const CALL_MS = 2_000;

describe.skipIf(chromiumPath === null || natsBinary === null || redisBinary === null)(
  'the dashboard on a fleet, a worker SIGKILLed mid-run',
  () => {
    let fleet: Fleet;
    let base: string;
    let admin: string;
    let browser: Browser;
    let page: Page;
    let problems: PageProblems;

    beforeAll(async () => {
      fleet = await startFleet({
        apis: 1,
        workers: 2,
        schedulers: 0,
        config: { surfaces: { dashboard: true } },
        reply: (request) => ({ ...echoReply(request), delay_ms: CALL_MS }),
      });
      base = fleet.urls[0]!;
      admin = (await call(base, 'POST', '/auth/keys', { body: { name: 'fleet-admin', role: 'admin' } })).body
        .secret;
      const install = await call(base, 'POST', '/catalog/install', {
        token: admin,
        body: { path: join(ROOT, 'examples', 'claims-review'), activate: true },
      });
      expect(install.status, JSON.stringify(install.body)).toBe(201);
      browser = await launchChromium(chromiumPath!);
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      problems = await watchPage(context);
      page = await context.newPage();
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      await fleet?.close();
    });

    async function startRun(input: string): Promise<void> {
      await openPage(page, 'Workflow runs');
      await page.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'claims-review' });
      await page.getByRole('textbox', { name: 'Input' }).fill(input);
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.getByRole('heading', { level: 1, name: 'Run of claims-review' }).waitFor();
    }

    it('follows the run to Completed across the loss of the worker that held a step', async () => {
      await signInWithKey(page, base, admin);
      await startRun('FLEET-1: water damage in the basement, policy HO-3003.');
      await page.evaluate('window.stayed = true');
      const steps = page.locator('ol.steps > li');
      await steps.first().waitFor({ timeout: 30_000 });

      // The coverage check (step 2) is now a model call in flight on one of the workers: kill that one.
      let victimPid: number | null = null;
      await waitUntil(
        async () => {
          const call2 = fleet.provider.requests.find(
            (r) =>
              JSON.stringify(r.body?.messages?.at(-1) ?? '').includes('Check the policy coverage') &&
              JSON.stringify(r.body).includes('FLEET-1'),
          );
          if (call2?.remotePort === undefined) return false;
          victimPid = await pidOwningPort(
            fleet.workers.map((w) => w.child.pid!),
            call2.remotePort,
          );
          return victimPid !== null;
        },
        { timeoutMs: 20_000, message: 'the coverage-check call on a worker' },
      );
      const victim = fleet.workers.find((w) => w.child.pid === victimPid)!;
      expect(await page.locator('dd').first().textContent()).toBe('Running');
      await victim.kill();

      const state = page.locator('dd').first();
      await expect.poll(() => state.textContent(), { timeout: 90_000 }).toBe('Completed');
      expect(await steps.count()).toBe(5);
      await page.getByText('The run has ended: Completed.').waitFor();
      expect(await page.evaluate('window.stayed')).toBe(true);
      // The coverage check ran again on the survivor: the killed call and its re-run are both recorded.
      const coverageCalls = fleet.provider.requests.filter(
        (r) =>
          JSON.stringify(r.body?.messages?.at(-1) ?? '').includes('Check the policy coverage') &&
          JSON.stringify(r.body).includes('FLEET-1'),
      );
      expect(coverageCalls.length).toBeGreaterThanOrEqual(2);
      expect(
        fleet.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null),
      ).toHaveLength(1);
      await screenshot(page, SCREENSHOT_DIR, '40-fleet-run-after-worker-kill');
      expect(problems.take()).toEqual([]);
    }, 180_000);

    it('stays usable: the pages load, and a new run completes on the surviving worker', async () => {
      await openPage(page, 'Agents');
      await expect
        .poll(() => page.getByRole('row', { name: /Policy servicing/ }).textContent())
        .toMatch(/Running/);
      await expectNamedControls(page);
      await startRun('FLEET-2: a fallen tree on the garage roof, policy HO-4004.');
      await expect
        .poll(() => page.locator('dd').first().textContent(), { timeout: 60_000 })
        .toBe('Completed');
      const runs = (await call(base, 'GET', '/runs', { token: admin })).body.runs;
      expect(runs.map((r: { state: string }) => r.state)).toEqual(['Completed', 'Completed']);
      expect(problems.take()).toEqual([]);
    }, 120_000);
  },
);
