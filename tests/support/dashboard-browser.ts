import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from './platform-process.ts';

/** Where the dashboard tests leave their screenshots (`.tmp/` is ignored by git). */
export const SCREENSHOT_DIR = join(ROOT, '.tmp', 'dashboard-screenshots');

/** Opens the dashboard and signs in with a key through the form, as a person does. */
export async function signInWithKey(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('textbox', { name: 'API key' }).fill(key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Follows a link of the dashboard's navigation and waits for the page's heading. */
export async function openPage(page: Page, link: string, heading = link): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Dashboard' })
    .getByRole('link', { name: link, exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.getByText('Loading…').waitFor({ state: 'detached' });
}

/** One focus stop: what a screen reader would say, and whether the focus ring shows. */
export interface FocusStop {
  name: string;
  visible: boolean;
}

/**
 * Presses Tab `count` times from where the focus is (the top of a freshly loaded page, where
 * nothing has the focus yet) and records each focused element: its
 * role-ish tag and accessible name, and whether a focus indicator is drawn (an outline of at
 * least 2 px that is not `none`).
 */
export async function tabThrough(page: Page, count: number): Promise<FocusStop[]> {
  const stops: FocusStop[] = [];
  for (let i = 0; i < count; i++) {
    await page.keyboard.press('Tab');
    stops.push(await page.evaluate<FocusStop>(DESCRIBE_FOCUS));
  }
  return stops;
}

// Page-side code as text: the tests are compiled for Node, without the DOM's types.
const DESCRIBE_FOCUS = `(() => {
  const el = document.activeElement;
  if (el === null || el === document.body) return { name: 'body', visible: false };
  const label = el.getAttribute('aria-label') ?? (el.textContent ?? '').trim().replace(/\\s+/g, ' ');
  const style = getComputedStyle(el);
  return { name: el.tagName.toLowerCase() + ':' + label, visible: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
})()`;

const UNNAMED_CONTROLS = `[...document.querySelectorAll('input, select, textarea, button, a[href], progress, meter')]
  .filter((el) => {
    if (el.getAttribute('aria-label')?.trim() || el.getAttribute('aria-labelledby')) return false;
    if (el.tagName === 'BUTTON' || el.tagName === 'A') return (el.textContent ?? '').trim() === '';
    return !el.labels || el.labels.length === 0 || [...el.labels].every((l) => (l.textContent ?? '').trim() === '');
  })
  .map((el) => el.outerHTML.slice(0, 120))`;

/**
 * Form controls and buttons without an accessible name: a label (for=/wrapping), aria-label or
 * aria-labelledby for controls, text or aria-label for buttons and links. Must be empty on every page.
 */
export async function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(UNNAMED_CONTROLS);
}

/** The page is fine for a keyboard and a screen reader: every control named. */
export async function expectNamedControls(page: Page): Promise<void> {
  expect(await unnamedControls(page)).toEqual([]);
}
