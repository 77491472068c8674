import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requireBinary } from '@agent-platform/testkit';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-durability-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// `[storage] durability` watched with strace (docs/performance.md "What durability costs"): with
// `full`, every write awaited one after another is followed by a sync of the WAL before it
// resolves; with `normal`, writes are not synced (only opening and closing the file sync).
const strace = requireBinary('strace');
describe.skipIf(strace === null)('the embedded store under strace', () => {
  const FIXTURE = fileURLToPath(new URL('./sync-writes.fixture.ts', import.meta.url));
  const WRITES = 40;

  async function syncsOf(durability: 'full' | 'normal'): Promise<{ syncs: string[]; trace: string[] }> {
    const trace = join(dir, `${durability}.strace`);
    const { stdout } = await promisify(execFile)(
      strace!,
      ['-f', '-y', '-e', 'trace=fdatasync,fsync,pwrite64,write', '-o', trace, process.execPath, '--import', 'tsx', FIXTURE, join(dir, `${durability}.db`), durability, String(WRITES)],
      { cwd: fileURLToPath(new URL('.', import.meta.url)) },
    );
    expect(stdout).toContain('done');
    const all = (await readFile(trace, 'utf8')).split('\n');
    const lines = all.filter((line) => /\b(fdatasync|fsync)\(/.test(line) && !line.includes('resumed'));
    return { syncs: lines, trace: all };
  }

  it('full: each write acknowledged only after a sync of the WAL that followed its commit', async () => {
    const { trace } = await syncsOf('full');
    // In the order the system calls happened (strace -f, one file): the WAL written (pwrite64 on
    // <db>-wal), a sync of the WAL completed (fdatasync or fsync ... = 0), the write acknowledged
    // (the fixture's "resolved i"). No acknowledgement may come after a WAL write without a
    // completed sync in between.
    let walWritten = false;
    let acknowledged = 0;
    for (const line of trace) {
      if (/pwrite64\(\d+<[^>]*-wal>/.test(line)) walWritten = true;
      else if (/f(?:data)?sync(\(\d+<[^>]*-wal>.*| resumed>.*)= 0$/.test(line)) walWritten = false;
      else if (/write\(1<[^>]*>, "resolved \d+/.test(line) || /write\(1, "resolved \d+/.test(line)) {
        expect(walWritten, `acknowledged before its sync: ${line}`).toBe(false);
        acknowledged++;
      }
    }
    expect(acknowledged).toBe(WRITES);
  }, 60_000);

  it('full: one sync per awaited write; normal: none per write', async () => {
    const full = await syncsOf('full');
    const normal = await syncsOf('normal');
    // normal: only what opening and closing the file make (schema, checkpoint at close).
    expect(normal.syncs.length).toBeLessThan(WRITES / 4);
    expect(full.syncs.length).toBeGreaterThanOrEqual(WRITES + normal.syncs.length);
  }, 60_000);
});
