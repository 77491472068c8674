/**
 * Child-process half of the concurrent-open test in `embedded-store.test.ts`: waits until the
 * wall-clock instant given (so that every child opens at once), opens the store on a file none of
 * them has created yet, adds 1 to a counter and exits 0, or prints the error and exits 1.
 *
 * Usage: node --import tsx open-race.fixture.ts <db-path> <epoch-ms>
 */
import { openEmbeddedStore } from './index.ts';

const [path, at] = process.argv.slice(2);
if (path === undefined || at === undefined) throw new Error('usage: open-race.fixture.ts <db-path> <epoch-ms>');
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(at) - Date.now())));
try {
  const store = await openEmbeddedStore({ path });
  await store.counters.add('opened', 1);
  await store.close();
} catch (error) {
  console.error(error);
  process.exit(1);
}
