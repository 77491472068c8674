/**
 * Child-process half of the durability test in `durability.test.ts`: opens a store with the given
 * durability, makes `count` writes one after another (each awaited), closes it and prints `done`.
 *
 * Usage: node --import tsx sync-writes.fixture.ts <db-path> <full|normal> <count>
 */
import { writeSync } from 'node:fs';
import { openEmbeddedStore } from './index.ts';

const [path, durability, count] = process.argv.slice(2);
if (path === undefined || (durability !== 'full' && durability !== 'normal') || count === undefined) {
  throw new Error('usage: sync-writes.fixture.ts <db-path> <full|normal> <count>');
}
const store = await openEmbeddedStore({ path, durability });
// The WAL exists from the first write on: the syncs counted are those of the writes below.
await store.counters.add('warm-up', 1);
for (let i = 0; i < Number(count); i++) {
  await store.counters.add('n', 1);
  // A system call of its own, so the trace shows where each write was acknowledged.
  writeSync(1, `resolved ${i}\n`);
}
await store.close();
process.stdout.write('done\n');
