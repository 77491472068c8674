/**
 * Child-process half of the multi-process test in `embedded-store.test.ts`: opens the same
 * SQLite file, prints `ready`, waits for a line on stdin, appends in lockstep with the parent,
 * then prints `done`.
 *
 * Usage: node --import tsx append-worker.fixture.ts <db-path> <writer> <count> <max-lead>
 */
import { openEmbeddedStore } from './index.ts';
import { appendInLockstep } from './lockstep-appends.fixture.ts';
import type { ChainEntry } from './lockstep-appends.fixture.ts';

const [path, writer, count, maxLead] = process.argv.slice(2);
if (path === undefined || writer === undefined || count === undefined || maxLead === undefined) {
  throw new Error('usage: append-worker.fixture.ts <db-path> <writer> <count> <max-lead>');
}

const store = await openEmbeddedStore({ path });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
await appendInLockstep(store.log<ChainEntry>('chain'), writer, Number(count), Number(maxLead));
await store.close();
process.stdout.write('done\n');
process.stdin.destroy();
