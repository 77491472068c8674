import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { requireBinary } from './require-binary.ts';

/**
 * Debian's Chromium (`apt-get install chromium`), never a browser Playwright downloads: the path,
 * or null after a printed reason (a failure under CI=true, like every binary a suite needs).
 */
export function requireChromium(): string | null {
  return requireBinary('chromium');
}

/**
 * Flags for a headless Chromium on a machine with no internet: no sandbox (root in a
 * container), no GPU, and none of the background fetches (component updates, sync, field
 * trials), which would otherwise be refused many at a time and slow every page down.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-default-apps',
  '--disable-features=Translate,MediaRouter,OptimizationHints',
];

/**
 * Launches Chromium at `executablePath`. Playwright gives each launch a fresh temporary profile
 * (user-data dir) and removes it on close; each `newContext()` is isolated further (its own
 * storage), so two people can be signed in side by side.
 */
export async function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** What went wrong in a page: console errors, uncaught exceptions, CSP violations. */
export interface PageProblems {
  /** Every problem so far, oldest first. */
  list(): string[];
  /** Problems since the last `take()` (or since the watch began), cleared. */
  take(): string[];
}

/**
 * Collects a page's console errors (a refused resource, a CSP violation: Chromium reports both
 * as console errors), uncaught exceptions and `securitypolicyviolation` events, for a test to
 * assert there were none.
 */
export async function watchPage(context: BrowserContext): Promise<PageProblems> {
  const all: string[] = [];
  let pending: string[] = [];
  const add = (problem: string): void => {
    all.push(problem);
    pending.push(problem);
  };
  await context.exposeBinding('__reportCspViolation', (_source, text: string) => add(`csp: ${text}`));
  // Page-side code as text: this file is compiled for Node, without the DOM's types.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => window.__reportCspViolation(e.violatedDirective + ' blocked ' + e.blockedURI));`,
  });
  context.on('console', (message) => {
    if (message.type() === 'error') add(`console: ${message.text()} (${message.location().url})`);
  });
  context.on('weberror', (error) => add(`exception: ${error.error().message}`));
  return {
    list: () => [...all],
    take: () => {
      const taken = pending;
      pending = [];
      return taken;
    },
  };
}

/** Saves a full-page screenshot as `<dir>/<name>.png` and returns the path. */
export async function screenshot(page: Page, dir: string, name: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
