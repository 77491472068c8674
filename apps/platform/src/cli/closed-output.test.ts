import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { spawnCliProcess } from './testing/cli-runs.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-cli-pipe-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// `agent-platform ... | head -1`: the reader takes one line and closes the pipe while the CLI still
// has far more to write than a pipe holds (64 KB), so its next write fails with EPIPE.
it('ends quietly when the reader of its output closes the pipe early, with the exit status of the command', async () => {
  const keys = Array.from({ length: 2200 }, (_, i) => `k${i} = 1`);
  const manifest = [
    '[package]',
    'type = "skill"',
    'name = "long-output"',
    'title = "T"',
    'version = "1.0.0"',
  ];
  await writeFile(join(dir, 'package.toml'), [...manifest, ...keys, ''].join('\n'));
  const child = spawnCliProcess(['package', 'validate', '.'], { cwd: dir });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let first = '';
  for await (const chunk of child.stdout) {
    first += (chunk as Buffer).toString();
    if (first.includes('\n')) break; // leaving the loop destroys the stream: the pipe is closed
  }
  expect(child.stdout.destroyed).toBe(true);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  expect(first.split('\n')[0]).toBe('package.toml: package.k0: unknown key [unknown-key]');
  expect(stderr).toBe('');
  // 1: the package has problems, as when the whole output is read.
  expect({ code, signal }).toEqual({ code: 1, signal: null });
});
