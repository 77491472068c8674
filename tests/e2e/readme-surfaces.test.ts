import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runFirstRunSetup } from '@agent-platform/config';
import { pdfPages } from '@agent-platform/compliance/testing';
import { freePort } from '@agent-platform/testkit';
import { launchChromium, requireChromium, screenshot, watchPage } from '@agent-platform/testkit/browser';
import type { Browser } from 'playwright-core';
import { parse } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { openPage } from '../support/dashboard-browser.ts';
import { ROOT, call, restartPlatform, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { answerPattern, readmeCommands, readmeSection } from '../support/readme-shell.ts';
import { createWalkthrough } from '../support/readme-walkthrough.ts';

// Issue 14, "done means": a new user turns the surfaces on, opens the dashboard in a browser,
// signs in, watches a workflow run complete and downloads a compliance report; an MCP client
// lists and calls the five tools. README "The dashboard and the MCP server" run as written: the
// tour's first-run platform with its admin key, the section's [surfaces] table put into the
// first-run agent-platform.toml, the restart, the install, then the browser steps in Debian's
// Chromium (sign-in with the key, a run started from the page and watched to Completed, the NAIC
// PDF downloaded from the Compliance page), then the assistant's key and examples/mcp-client.mjs
// run with node against /mcp. Every `# =>` answer is checked against what the command printed.
const SECTION = 'The dashboard and the MCP server';
const chromiumPath = requireChromium();
const SCREENSHOTS = join(ROOT, '.tmp', 'readme-surfaces-screenshots');
/** The README's words for the browser steps, checked to be in the section before they are used. */
const RUN_INPUT = 'Burst pipe flooded the kitchen, policy HO-1234';
const PDF_NAME = 'compliance-report-naic-ais-bulletin.pdf';
const NAIC = 'NAIC Model Bulletin: Use of Artificial Intelligence Systems by Insurers';

let dir: string | undefined;
let platform: PlatformProcess | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  platform?.kill();
  await platform?.exited;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The first ```toml block of the section: the table the reader puts into agent-platform.toml. */
function tomlBlock(text: string): string {
  const block = /```toml\n([\s\S]*?)```/.exec(text);
  if (block === null) throw new Error(`README "${SECTION}" has no toml block`);
  return block[1]!;
}

describe.skipIf(chromiumPath === null)('README dashboard and MCP walkthrough (Chromium)', () => {
  it('surfaces on, sign in, a run watched to Completed, the NAIC PDF downloaded; an MCP client calls the five tools', async () => {
    // The reader's checkout: the examples beside the config file, inside the repository so that
    // `node examples/mcp-client.mjs` finds the installed SDK as it does at the real root.
    await mkdir(join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(join(ROOT, '.tmp', 'readme-surfaces-'));
    await cp(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });

    // The tour's first `npm start`: the first-run files exactly (on a free port instead of 4200),
    // then the first admin key through the bootstrap rule, kept as $AP_KEY.
    await runFirstRunSetup({ cwd: dir, env: {}, log: () => {} });
    const port = await freePort();
    const configPath = join(dir, 'agent-platform.toml');
    const firstRun = await readFile(configPath, 'utf8');
    await writeFile(configPath, firstRun.split('127.0.0.1:4200').join(`127.0.0.1:${port}`));
    platform = startPlatform(dir);
    const B = await platform.listening(90_000);
    const admin = await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } });
    expect(admin.status, admin.text).toBe(200);
    const AP_KEY: string = admin.body.secret;
    // Off by default: neither path exists yet.
    expect((await call(B, 'GET', '/dashboard/', { token: AP_KEY })).status).toBe(404);
    expect((await call(B, 'POST', '/mcp', { token: AP_KEY, body: {} })).status).toBe(404);

    // The section's [surfaces] table replaces the first-run one (`dashboard = false`).
    const text = (await readmeSection(SECTION)).lines.join('\n');
    const prose = text.replace(/\s+/g, ' ');
    const surfaces = tomlBlock(text);
    expect(parse(surfaces)).toEqual({ surfaces: { dashboard: true, mcp: true } });
    const current = await readFile(configPath, 'utf8');
    const table = /^\[surfaces\]\n[\s\S]*?(?=^\[)/m.exec(current);
    expect(table?.[0]).toContain('dashboard = false');
    await writeFile(configPath, current.replace(table![0], `${surfaces}\n`));
    expect(parse(await readFile(configPath, 'utf8'))).toMatchObject({
      surfaces: { dashboard: true, mcp: true },
    });

    const w = createWalkthrough(await readmeCommands(SECTION), {
      dir,
      home: dir,
      addresses: { '127.0.0.1:4200': `127.0.0.1:${port}` },
      vars: { B, H: `Authorization: Bearer ${AP_KEY}`, AP_KEY },
      async startPlatform() {
        platform = await restartPlatform(platform!, dir!);
        return platform.output();
      },
    });
    await w.next('npm start');
    const install = await w.next('curl -s -H "$H" -X POST $B/catalog/install');
    const workflowId: string = install.json.installed.at(-1).id;
    // Installed already (the workflow section): the reply lists the workflow `unchanged`, and
    // still fits the README's answer.
    const again = await call(B, 'POST', '/catalog/install', {
      token: AP_KEY,
      body: { path: join(dir, 'examples', 'claims-review'), activate: true },
    });
    expect(again.body.installed).toEqual([
      expect.objectContaining({ name: 'claims-review', id: workflowId, status: 'unchanged' }),
    ]);
    expect(again.text).toMatch(answerPattern(install.command.answer!).pattern);

    // In a browser: the address the README gives, the admin key in the sign-in form.
    expect(prose).toContain('open http://127.0.0.1:4200/dashboard and sign in with your admin key');
    browser = await launchChromium(chromiumPath!);
    const context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      acceptDownloads: true,
    });
    const problems = await watchPage(context);
    const page = await context.newPage();
    const response = await page.goto(`${B}/dashboard`);
    expect(response?.status()).toBe(200);
    await page.getByRole('textbox', { name: 'API key' }).fill(AP_KEY);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect.poll(() => page.locator('.topbar').textContent()).toContain('Signed in as admin');

    // 1. Workflow runs: claims-review, the README's input, Start run; the run page to Completed.
    expect(prose).toContain(
      `**Workflow runs**: choose \`claims-review\`, type an input such as \`${RUN_INPUT}\`, and press **Start run**`,
    );
    await openPage(page, 'Workflow runs');
    await page.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'claims-review' });
    await page.getByRole('textbox', { name: 'Input' }).fill(RUN_INPUT);
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/dashboard\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').at(-1)!;
    await page.getByRole('heading', { level: 1, name: 'Run of claims-review' }).waitFor();
    await expect.poll(() => page.locator('dd').first().textContent(), { timeout: 30_000 }).toBe('Completed');
    await page.getByText('The run has ended: Completed.').waitFor();
    expect(await page.locator('ol.steps > li').count()).toBe(5);
    await expect
      .poll(() => page.locator('dd pre').nth(1).textContent())
      .toContain('Recommend the next action');
    await screenshot(page, SCREENSHOTS, 'run-completed');
    // The run the page started is the platform's: that workflow, that input, Completed.
    const run = (await call(B, 'GET', `/runs/${runId}`, { token: AP_KEY })).body;
    expect(run).toMatchObject({ workflow_id: workflowId, input: RUN_INPUT, state: 'Completed' });

    // 2. Compliance: View the NAIC report, then Download PDF: the file the README names.
    expect(prose).toContain(`**Download PDF** saves \`${PDF_NAME}\``);
    await openPage(page, 'Compliance');
    await page.getByRole('button', { name: `View the ${NAIC} report` }).click();
    await page.getByRole('heading', { level: 2, name: `Report: ${NAIC}` }).waitFor();
    await expect.poll(() => page.locator('#page').textContent()).toMatch(/\d+ satisfied/);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download the ${NAIC} report as PDF` }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(PDF_NAME);
    const pdf = await readFile(await file.path());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pages = await pdfPages(pdf);
    expect(pages[0]).toContain(NAIC);
    // The first-run development licence's carrier.
    expect(pages[0]).toContain('Development (dev-local)');
    expect(pages.at(-1)).toContain('Sign-off');
    await page.getByText(`${PDF_NAME} downloaded.`).waitFor();
    await screenshot(page, SCREENSHOTS, 'compliance');
    // No console error, exception or CSP violation on any page the reader saw.
    expect(problems.take()).toEqual([]);

    // An MCP client: the assistant's service key, then the SDK client as a program.
    const key = await w.next('curl -s -H "$H" -X POST $B/auth/keys');
    expect(key.json).toMatchObject({ name: 'assistant', role: 'service', expires_at: expect.any(String) });
    await w.next('export AP_MCP_KEY=', { value: key.json.secret as string });
    const client = await w.next('node examples/mcp-client.mjs $B/mcp');
    const lines = client.text.trim().split('\n');
    expect(lines).toHaveLength(7);
    const mcpRun = /^run_workflow claims-review: run ([0-9a-f-]{36}) Completed$/.exec(lines[4]!)?.[1];
    expect(lines[5]).toMatch(new RegExp(`^get_run ${mcpRun}: Completed,`));
    // The tools did what the routes do: a Completed run of the workflow, audited as the assistant,
    // and the refused audit search recorded under access.
    expect((await call(B, 'GET', `/runs/${mcpRun}`, { token: AP_KEY })).body).toMatchObject({
      workflow_id: workflowId,
      state: 'Completed',
    });
    const audit = (await call(B, 'GET', '/security/audit?limit=20', { token: AP_KEY })).body.entries;
    const byAssistant = audit.filter(
      (e: { identity: string; action: string }) => e.identity === 'assistant' && e.action.startsWith('MCP '),
    );
    expect(
      byAssistant.map((e: { category: string; action: string; result: string }) => [
        e.category,
        e.action,
        e.result,
      ]),
    ).toEqual([
      ['access', 'MCP search_audit', '403'],
      ['workflows', 'MCP run_workflow', '201'],
      ['request', 'MCP send_message', '200'],
    ]);

    expect(w.remaining()).toEqual([]);
    // No key in the platform's output.
    for (const secret of [AP_KEY, key.json.secret as string]) expect(platform.output()).not.toContain(secret);
  }, 300_000);
});
