import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Where the dashboard is mounted on the api listener (spec "Rules of the model" 2). */
export const DASHBOARD_PATH = '/dashboard';

const WEB_DIR = fileURLToPath(new URL('../web/', import.meta.url));

/** One built file, served at `/dashboard/assets/<name>`; its name carries a hash of its bytes. */
export interface DashboardAsset {
  body: Buffer;
  contentType: string;
}

/** What the api serves under /dashboard: the page (the same for every path) and its assets. */
export interface DashboardBundle {
  /** index.html with the hashed asset names filled in. */
  html: string;
  /** By file name (`main-<hash>.js`, `main-<hash>.css`, `icon-<hash>.svg`). */
  assets: ReadonlyMap<string, DashboardAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Bundles the browser code (web/main.ts and the stylesheet it imports) with esbuild, in memory.
 * The output is plain files under /dashboard/assets: no CDN, no external font, no inline script
 * or style, so the page works on a machine with no internet under a strict CSP
 * (docs/dashboard.md "How it is built"). Names carry a content hash, so they can be cached
 * for good while the page itself is revalidated.
 */
export async function buildDashboard(): Promise<DashboardBundle> {
  const result = await build({
    entryPoints: [`${WEB_DIR}main.ts`],
    bundle: true,
    write: false,
    outdir: '/assets',
    entryNames: '[name]-[hash]',
    format: 'esm',
    // What a supported browser runs natively: evergreen Chromium, Firefox and Safari of 2023 on.
    target: ['chrome115', 'firefox115', 'safari16.4'],
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const assets = new Map<string, DashboardAsset>();
  for (const file of result.outputFiles) {
    const type = CONTENT_TYPES[extname(file.path)];
    if (type !== undefined)
      assets.set(basename(file.path), { body: Buffer.from(file.contents), contentType: type });
  }
  const icon = await readFile(`${WEB_DIR}icon.svg`);
  const iconName = `icon-${createHash('sha256').update(icon).digest('hex').slice(0, 8)}.svg`;
  assets.set(iconName, { body: icon, contentType: CONTENT_TYPES['.svg']! });
  const script = [...assets.keys()].find((name) => name.startsWith('main-') && name.endsWith('.js'));
  const style = [...assets.keys()].find((name) => name.startsWith('main-') && name.endsWith('.css'));
  if (script === undefined || style === undefined)
    throw new Error('dashboard build produced no main script or stylesheet');
  const template = await readFile(`${WEB_DIR}index.html`, 'utf8');
  const html = template
    .replaceAll('%SCRIPT%', `${DASHBOARD_PATH}/assets/${script}`)
    .replaceAll('%STYLE%', `${DASHBOARD_PATH}/assets/${style}`)
    .replaceAll('%ICON%', `${DASHBOARD_PATH}/assets/${iconName}`);
  return { html, assets };
}

let cached: Promise<DashboardBundle> | null = null;

/**
 * The bundle of this process, built once on first use (tens of milliseconds) and kept in memory:
 * every api node builds the same bytes from the same sources, so a fleet behind a load balancer
 * serves the same asset names. A failed build is not cached, so the next start tries again.
 */
export function loadDashboardBundle(): Promise<DashboardBundle> {
  cached ??= buildDashboard().catch((error: unknown) => {
    cached = null;
    throw error;
  });
  return cached;
}
