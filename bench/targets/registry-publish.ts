import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeProcess, type NodeProcess } from '../node-process.ts';
import { archivePool, runPublishLoad } from '../publish-load.ts';
import { buildPublishArchives, PUBLISH_EXAMPLE } from '../registry-publish.ts';
import type { BenchTarget } from '../target.ts';

const REGISTRY_MAIN = fileURLToPath(new URL('../../apps/registry/src/main.ts', import.meta.url));
/**
 * Archives built per target before anything is timed (about 4 s, 21 MB): more than the default
 * warm-up and measured run publish on this machine (800 a second at 8 in flight, 13 s). If they
 * run out, the run stops there and says so.
 */
const POOL_SIZE = 30_000;

/**
 * `POST /packages` on the registry as an operator runs it (apps/registry/src/main.ts with a config
 * file: embedded store, archives on the filesystem under its data dir, auth mode disabled on
 * loopback, durable commits), `concurrency` publishes in flight whatever `--connections` says.
 */
function registryPublish(concurrency: number): BenchTarget {
  return {
    name: `registry-publish-${concurrency}`,
    description: `registry POST /packages of distinct ${PUBLISH_EXAMPLE} archives, ${concurrency} in flight (publishes/s)`,
    async start({ nodeFlags }) {
      const dir = await mkdtemp(join(tmpdir(), 'ap-bench-registry-publish-'));
      let registry: NodeProcess | undefined;
      const stop = async () => {
        await registry?.stop();
        await rm(dir, { recursive: true, force: true });
      };
      try {
        await writeFile(
          join(dir, 'registry.toml'),
          `[storage]\ndata_dir = "./data"\n\n[registry]\nlisten = "127.0.0.1:0"\n`,
        );
        registry = startNodeProcess({
          entry: REGISTRY_MAIN,
          args: ['--config', join(dir, 'registry.toml')],
          cwd: dir,
          nodeFlags,
          logFile: join(dir, 'output.log'),
        });
        const [url, archives] = await Promise.all([registry.listening(), buildPublishArchives(POOL_SIZE)]);
        const pool = archivePool(archives);
        return {
          urls: [url],
          processes: [{ role: 'registry', pid: registry.pid }],
          // What the runner checks before the load: the registry up, its archive store writable.
          request: { method: 'GET', path: '/health' },
          measure: (settings) =>
            runPublishLoad(url, pool, { concurrency, durationSecs: settings.durationSecs }),
          stop,
        };
      } catch (error) {
        await stop();
        throw error;
      }
    },
  };
}

export const registryPublishOne = registryPublish(1);
export const registryPublishEight = registryPublish(8);
