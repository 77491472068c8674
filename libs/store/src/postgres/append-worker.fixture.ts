/**
 * Child-process half of the multi-process test in `postgres-store.test.ts`: opens the store on
 * the given database and schema, prints `ready`, waits for a line on stdin, appends `count`
 * chained entries as `writer` (each linking the tip its builder saw), then prints `done`.
 *
 * Usage: node --import tsx append-worker.fixture.ts <url> <schema> <writer> <count>
 */
import { openPostgresStore } from './index.ts';

interface ChainEntry {
  writer: string;
  n: number;
  prev: string | null;
}

const [url, schema, writer, count] = process.argv.slice(2);
if (url === undefined || schema === undefined || writer === undefined || count === undefined) {
  throw new Error('usage: append-worker.fixture.ts <url> <schema> <writer> <count>');
}

const store = await openPostgresStore({ url, schema, poolSize: 2 });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const log = store.log<ChainEntry>('chain');
for (let n = 1; n <= Number(count); n++) {
  await log.append((tip) => ({ writer, n, prev: tip === null ? null : `${tip.writer}#${tip.n}@${tip.seq}` }));
}
await store.close();
process.stdout.write('done\n');
process.stdin.destroy();
