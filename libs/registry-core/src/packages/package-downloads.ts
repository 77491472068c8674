import type { RegistryDownloads } from '@agent-platform/contracts';
import { loadPackage } from './package-reads.ts';
import { sortHighestFirst } from './package-views.ts';
import type { RegistryContext } from './registry-context.ts';

/** How long a day's count is kept. */
const DAYS_KEPT = 90;
const DAY_MS = 86_400_000;

const totalPrefix = (name: string) => `registry:downloads:total:${name}:`;
const dayPrefix = (name: string) => `registry:downloads:day:${name}:`;

/**
 * Counts one download of `name@version` (docs/registry.md "Downloads"): the version's total, kept
 * for good, and the version's count of the day (UTC), kept 90 days: two counter adds submitted
 * together (one commit on the embedded store). Package names hold no `:`, so one package's keys
 * are never a prefix of another's.
 */
export async function countDownload(ctx: RegistryContext, name: string, version: string): Promise<void> {
  try {
    await addDownload(ctx, name, version);
  } catch (error) {
    // A count is bookkeeping: the archive still goes out.
    ctx.logger.warn({ err: error, name, version }, 'registry: counting a download failed');
  }
}

async function addDownload(ctx: RegistryContext, name: string, version: string): Promise<void> {
  const now = ctx.clock.now();
  const day = now.toISOString().slice(0, 10);
  const expiresAt = new Date(Date.parse(day) + (DAYS_KEPT + 1) * DAY_MS).toISOString();
  await Promise.all([
    ctx.store.counters.add(`${totalPrefix(name)}${version}`, 1),
    ctx.store.counters.add(`${dayPrefix(name)}${day}:${version}`, 1, { expiresAt }),
  ]);
}

/** `GET /packages/{name}/downloads`: per version since publish, per day over the last 90. */
export async function readDownloads(ctx: RegistryContext, name: string): Promise<RegistryDownloads> {
  const { versions } = await loadPackage(ctx, name);
  const [totals, days] = await Promise.all([ctx.store.counters.list(totalPrefix(name)), ctx.store.counters.list(dayPrefix(name))]);
  const byVersion = new Map<string, number>();
  for (const [key, count] of Object.entries(totals)) byVersion.set(key.slice(totalPrefix(name).length), count);
  const oldest = new Date(ctx.clock.now().getTime() - (DAYS_KEPT - 1) * DAY_MS).toISOString().slice(0, 10);
  const byDay = new Map<string, number>();
  for (const [key, count] of Object.entries(days)) {
    const date = key.slice(dayPrefix(name).length, dayPrefix(name).length + 10);
    if (date >= oldest) byDay.set(date, (byDay.get(date) ?? 0) + count);
  }
  const perVersion = sortHighestFirst(versions).map((v) => ({ version: v.version, downloads: byVersion.get(v.version) ?? 0 }));
  return {
    name,
    total: perVersion.reduce((sum, v) => sum + v.downloads, 0),
    versions: perVersion,
    days: [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, downloads]) => ({ date, downloads })),
  };
}
