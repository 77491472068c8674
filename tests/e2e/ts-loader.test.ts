import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_LOADER } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The loader `npm start` runs the platform with (scripts/ts-loader): TypeScript compiled by
// esbuild without `keepNames` (docs/performance.md "How the platform's processes load
// TypeScript"), cached on disk by the source's hash, stack traces on the TypeScript lines.

const PROGRAM = `
const double = (n: number): number => n * 2;
class Total {
  extra = 1;
  constructor(private readonly base: number) {}
  get value(): number { return double(this.base) + this.extra; }
}
const where = new Error('here').stack?.split('\\n')[1] ?? '';
console.log(JSON.stringify({ name: double.name, value: new Total(20).value, where }));
`;

describe('the platform loader', () => {
  let dir: string;
  let cache: string;
  const run = (file: string) =>
    spawnSync(process.execPath, ['--import', PLATFORM_LOADER, file], { encoding: 'utf8', env: { PATH: process.env.PATH, AP_TS_CACHE_DIR: cache } });
  const cached = async () => (await readdir(cache, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-ts-loader-'));
    cache = join(dir, 'cache');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('runs TypeScript as tsconfig.base.json means it, names kept, stack traces on the .ts lines', async () => {
    const file = join(dir, 'program.ts');
    await writeFile(file, PROGRAM);
    const result = run(file);
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as { name: string; value: number; where: string };
    expect(out.name).toBe('double');
    expect(out.value).toBe(41);
    expect(out.where).toContain(`${file}:8:`);
    // No esbuild `__name` wrapper around each function: that is what the loader exists for.
    const [compiled] = await cached();
    expect(await readFile(compiled!, 'utf8')).not.toMatch(/__name\(/);
  });

  it('compiles a source once, and again when it changed', async () => {
    const file = join(dir, 'changing.ts');
    await writeFile(file, 'const n: number = 1; console.log(n);\n');
    expect(run(file).stdout.trim()).toBe('1');
    const first = new Set(await cached());
    const written = await Promise.all([...first].map(async (f) => [f, (await stat(f)).mtimeMs] as const));
    expect(run(file).stdout.trim()).toBe('1');
    expect(new Set(await cached())).toEqual(first);
    for (const [f, mtime] of written) expect((await stat(f)).mtimeMs).toBe(mtime);
    await writeFile(file, 'const n: number = 2; console.log(n);\n');
    expect(run(file).stdout.trim()).toBe('2');
    expect((await cached()).length).toBe(first.size + 1);
  });

  it('reports a syntax error with the file and line', async () => {
    const file = join(dir, 'broken.ts');
    await writeFile(file, 'const ok = 1;\nconst = 2;\n');
    const result = run(file);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('broken.ts:2');
  });
});
