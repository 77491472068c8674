import { archivePool } from '../publish-load.ts';
import { buildPublishArchives } from '../registry-publish.ts';
import { runSearchWhilePublishing } from '../search-while-publishing.ts';
import type { BenchTarget } from '../target.ts';
import { REGISTRY_SEARCH_PACKAGES, startSeededRegistry } from './registry-search.ts';

const SEARCHERS = 8;
const PUBLISHES_PER_SEC = 5;
/** Archives built before anything is timed (about 0.5 s): 5 a second for 15 minutes, warm-up included. */
const POOL_SIZE = PUBLISHES_PER_SEC * 15 * 60;

/**
 * Issue 25's search while publishing: the registry of the search target (10,000 seeded packages,
 * serving with durable commits), 8 clients running the search mix while one publisher sends a new
 * package or version 5 times a second and searches for it right after. `--connections` does not
 * apply (8 searchers, as the issue says); `--duration 600` is the 10-minute run of the issue.
 */
export const registrySearchPublishing: BenchTarget = {
  name: 'registry-search-publishing',
  description: `registry GET /search over ${REGISTRY_SEARCH_PACKAGES.toLocaleString('en')} packages by ${SEARCHERS} clients while ${PUBLISHES_PER_SEC} publishes a second land (issue 25)`,
  goals: [
    { kind: 'at-most', metric: 'latencyP99Ms', atMost: 50, label: 'search p99 <= 50 ms while publishing 5/s (issue 25)' },
    { kind: 'at-most', metric: 'detail:not_found_after_publish', atMost: 0, label: 'a search right after a publish shows it, every time' },
    { kind: 'at-most', metric: 'detail:rss_growth_pct', atMost: 10, label: 'registry RSS flat: last third within 10 % of the middle third' },
  ],
  async start({ nodeFlags }) {
    const pool = archivePool(await buildPublishArchives(POOL_SIZE));
    return startSeededRegistry({
      nodeFlags,
      durability: 'full',
      measure: (url, pid, settings) =>
        runSearchWhilePublishing(url, pool, { durationSecs: settings.durationSecs, searchers: SEARCHERS, publishesPerSec: PUBLISHES_PER_SEC, pid }),
    });
  },
};
