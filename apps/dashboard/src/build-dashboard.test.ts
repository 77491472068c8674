import { describe, expect, it } from 'vitest';
import { buildDashboard, loadDashboardBundle } from './build-dashboard.ts';

describe('the dashboard bundle (docs/dashboard.md "How it is built")', () => {
  it('is a script, a stylesheet and an icon, named by content hash, referenced by the page', async () => {
    const bundle = await buildDashboard();
    // Sorted by extension: the hashes decide nothing about the order.
    const names = [...bundle.assets.keys()].sort((a, b) =>
      a.split('.').at(-1)!.localeCompare(b.split('.').at(-1)!),
    );
    expect(names).toEqual([
      expect.stringMatching(/^main-[A-Z0-9]+\.css$/),
      expect.stringMatching(/^main-[A-Z0-9]+\.js$/),
      expect.stringMatching(/^icon-[0-9a-f]{8}\.svg$/),
    ]);
    for (const name of names) expect(bundle.html).toContain(`/dashboard/assets/${name}`);
    // Same sources, same bytes: every api node of a fleet serves the same names.
    expect([...(await buildDashboard()).assets.keys()].sort()).toEqual([...names].sort());
  });

  it('fetches nothing from another origin: no URL but the SVG namespace, no font, no import', async () => {
    const bundle = await buildDashboard();
    for (const [name, asset] of bundle.assets) {
      const text = asset.body.toString('utf8');
      const urls = [...text.matchAll(/\b(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*/gi)].map(
        (m) => m[0],
      );
      expect(
        urls.filter((url) => url !== 'http://www.w3.org/2000/svg'),
        name,
      ).toEqual([]);
      expect(text, name).not.toMatch(/@import|@font-face|url\(\s*['"]?https?:/i);
    }
  });

  it('needs neither eval nor inline styles, which the CSP forbids', async () => {
    const script = [...(await buildDashboard()).assets]
      .find(([name]) => name.endsWith('.js'))![1]
      .body.toString('utf8');
    expect(script).not.toMatch(/\beval\(|new Function\(|setAttribute\(\s*["']style["']|\.innerHTML\s*=/);
  });

  it('is built once per process and kept', async () => {
    expect(await loadDashboardBundle()).toBe(await loadDashboardBundle());
  });
});
