import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkOnce, runLoad } from '../load.ts';
import { startNodeProcess } from '../node-process.ts';
import { REGISTRY_SEARCH_QUERIES } from '../registry-search.ts';
import type { BenchTarget, LoadResult, LoadSettings, StartedTarget } from '../target.ts';

const SERVER = fileURLToPath(new URL('../servers/registry-search.ts', import.meta.url));
export const REGISTRY_SEARCH_PACKAGES = 10_000;

/**
 * The registry of the search targets (servers/registry-search.ts: 10,000 seeded packages) in a
 * temp dir, serving with `durability`, every query of the mix answered 2xx before the load; then
 * `measure` (given the registry's URL and pid) drives it.
 */
export async function startSeededRegistry(options: {
  nodeFlags: string[];
  durability: 'normal' | 'full';
  measure: (url: string, pid: number, settings: LoadSettings) => Promise<LoadResult>;
}): Promise<StartedTarget> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-registry-search-'));
  const server = startNodeProcess({
    entry: SERVER,
    args: ['--data-dir', dir, '--packages', String(REGISTRY_SEARCH_PACKAGES), '--durability', options.durability],
    cwd: dir,
    nodeFlags: options.nodeFlags,
    logFile: join(dir, 'output.log'),
  });
  const stop = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const url = await server.listening(120_000);
    // Every query of the mix answers 2xx before the load, not only the first.
    for (const request of REGISTRY_SEARCH_QUERIES) await checkOnce([url], request);
    return {
      urls: [url],
      processes: [{ role: 'registry', pid: server.pid }],
      request: REGISTRY_SEARCH_QUERIES[0]!,
      measure: (settings) => options.measure(url, server.pid, settings),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** GET /search over 10,000 published packages, a mix of text and filter queries (issue 12). */
export const registrySearch: BenchTarget = {
  name: 'registry-search',
  description: `registry GET /search over ${REGISTRY_SEARCH_PACKAGES.toLocaleString('en')} packages, ${REGISTRY_SEARCH_QUERIES.length} queries in turn (text, filters, pages)`,
  goal: { kind: 'at-most', metric: 'latencyP99Ms', atMost: 50, label: 'registry search p99 <= 50 ms over 10,000 packages (issue 12)' },
  start: ({ nodeFlags }) =>
    startSeededRegistry({ nodeFlags, durability: 'normal', measure: (url, _pid, settings) => runLoad([url], REGISTRY_SEARCH_QUERIES, settings) }),
};
