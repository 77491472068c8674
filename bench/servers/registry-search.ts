import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seedVersions } from '@agent-platform/registry-core/testing';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { searchRoutes } from '../../apps/registry/src/routes/search-routes.ts';
import { buildRegistryTestApp } from '../../apps/registry/src/testing/registry-test-app.ts';
import { registrySearchCorpus } from '../registry-search.ts';

// The registry search benchmark's server (issue 12): a registry app over the embedded store in
// --data-dir, seeded with --packages packages (bench/registry-search.ts), GET /search on a free
// loopback port. The app is built like registry-app.ts builds it, with the search routes
// registered; auth mode disabled, so the auth hook's cost is the placeholder's.
const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, packages: { type: 'string', default: '10000' } } });
const dataDir = values['data-dir'];
if (dataDir === undefined) throw new Error('--data-dir is required');

// The seed is setup, not what is measured: `normal` durability spares it 20,000 fsyncs.
const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db'), durability: 'normal' });
const corpus = registrySearchCorpus(Number(values.packages));
const seededAt = Date.now();
await seedVersions(store, corpus);
console.log(`seeded ${values.packages} packages (${corpus.length} versions) in ${Date.now() - seededAt} ms`);

const app = await buildRegistryTestApp({ store, plugins: [searchRoutes] });
const builtAt = Date.now();
const first = await app.inject({ method: 'GET', url: '/search' });
if (first.statusCode !== 200) throw new Error(`GET /search answered ${first.statusCode}: ${first.body}`);
console.log(`index of ${first.json<{ total: number }>().total} packages built in ${Date.now() - builtAt} ms`);

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`registry-search listening on ${address}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void app.close().then(() => store.close()).then(() => process.exit(0)));
}
