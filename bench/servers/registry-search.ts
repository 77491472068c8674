import { parseArgs } from 'node:util';
import { defaultConfig } from '@agent-platform/config';
import { systemClock } from '@agent-platform/domain';
import { openEngines, platformVersion } from '@agent-platform/engines';
import { createLogger } from '@agent-platform/observability';
import { buildRegistryApp, openRegistryDeps } from '@agent-platform/registry';
import { seedVersions } from '@agent-platform/registry-core/testing';
import { registrySearchCorpus } from '../registry-search.ts';

// The registry search benchmark's server (issue 12): the real registry app (`buildRegistryApp`:
// every route group, the registry auth hook in mode disabled, the api's HTTP policy) over the
// embedded engines and the adapters `openRegistryDeps` picks (signing key and filesystem archives
// under --data-dir), seeded with --packages packages (bench/registry-search.ts), on a free
// loopback port.
const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    packages: { type: 'string', default: '10000' },
    // What the registry serves with once seeded (the publishing target publishes durably).
    durability: { type: 'string', default: 'normal' },
  },
});
const dataDir = values['data-dir'];
if (dataDir === undefined) throw new Error('--data-dir is required');

const durability = values.durability;
if (durability !== 'normal' && durability !== 'full') throw new Error('--durability is normal or full');

const config = defaultConfig();
config.storage.data_dir = dataDir;
config.registry.listen = '127.0.0.1:0';
const { logger } = createLogger({ level: 'warn', bufferLines: 10 });
const open = () => openEngines(config, { clock: systemClock, logger, dataDir, processName: 'registry-search-bench' });

// The seed is setup, not what is measured: `normal` durability spares it 20,000 fsyncs.
config.storage.durability = 'normal';
const seeding = await open();
const corpus = registrySearchCorpus(Number(values.packages));
const seededAt = Date.now();
await seedVersions(seeding.store, corpus);
console.log(`seeded ${values.packages} packages (${corpus.length} versions) in ${Date.now() - seededAt} ms`);
await seeding.close();

config.storage.durability = durability;
const engines = await open();

const opened = await openRegistryDeps({
  engines,
  logger,
  clock: systemClock,
  version: platformVersion(),
  config: () => config,
});
const app = await buildRegistryApp({ ...opened.deps, engines });
const builtAt = Date.now();
const first = await app.inject({ method: 'GET', url: '/search' });
if (first.statusCode !== 200) throw new Error(`GET /search answered ${first.statusCode}: ${first.body}`);
console.log(`index of ${first.json<{ total: number }>().total} packages built in ${Date.now() - builtAt} ms`);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`registry-search listening on ${address}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(
    signal,
    () =>
      void app
        .close()
        .then(() => opened.close())
        .then(() => engines.close())
        .then(() => process.exit(0)),
  );
}
