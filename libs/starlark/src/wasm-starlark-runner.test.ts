import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildInterpreter, ENABLE_STARLARK, isInterpreterBuilt } from './interpreter-build.ts';
import { PREBUILT_DIR } from './prebuilt.ts';
import { loadStarlarkRunner } from './wasm-starlark-runner.ts';
import { requireStarlarkRunner } from './testing.ts';

const runner = requireStarlarkRunner('the Starlark interpreter tests');
const limits = { maxSteps: 1_000_000, timeoutMs: 10_000 };
const RUNAWAY = `
def spin(args):
    n = 0
    for i in range(1000000000):
        for j in range(1000000000):
            n += 1
    return n
`;

afterAll(async () => runner?.close());

describe.skipIf(runner === null)('the Starlark interpreter (WebAssembly in a worker thread)', () => {
  const star = runner!;

  it('runs a function on JSON arguments and answers its result as JSON text', async () => {
    const source = 'def quote(args):\n    return {"premium": args["base"] * (1 + args["rate"]), "ok": True}\n';
    const outcome = await star.call(source, 'tools.star', 'quote', JSON.stringify({ base: 200, rate: 0.5 }), limits);
    expect(outcome).toEqual({ ok: true, value: '{"ok":true,"premium":300}' });
  });

  it('lists the top-level functions of a module and how many parameters each takes', async () => {
    const source = 'def a(args):\n    return 1\n\ndef b(x, y):\n    return 2\n\nc = 3\n';
    expect(await star.check(source, 'tools.star', limits)).toEqual({
      ok: true,
      value: { functions: [{ name: 'a', params: 1 }, { name: 'b', params: 2 }] },
    });
  });

  it('stops a runaway loop at the step limit, with a clear error naming the line', async () => {
    const started = Date.now();
    const outcome = await star.call(RUNAWAY, 'tools.star', 'spin', '{}', { maxSteps: 100_000, timeoutMs: 10_000 });
    expect(outcome).toEqual({
      ok: false,
      // Wherever in the loops the limit falls: lines 4-6 of RUNAWAY.
      error: { kind: 'step_limit', message: 'stopped after 100000 steps, the step limit', line: expect.toSatisfy((n: number) => n >= 4 && n <= 6) },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops a run at the wall-time limit by terminating its worker, and keeps working afterwards', async () => {
    const started = Date.now();
    const outcome = await star.call(RUNAWAY, 'tools.star', 'spin', '{}', { maxSteps: 1e15, timeoutMs: 300 });
    expect(outcome).toEqual({ ok: false, error: { kind: 'timeout', message: 'stopped after 300 ms, the time limit' } });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await star.call('def one(args):\n    return 1\n', 'tools.star', 'one', '{}', limits)).toEqual({ ok: true, value: '1' });
  });

  it('stops a run when the caller cancels it', async () => {
    const controller = new AbortController();
    const pending = star.call(RUNAWAY, 'tools.star', 'spin', '{}', { maxSteps: 1e15, timeoutMs: 10_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({ ok: false, error: { kind: 'aborted', message: 'the call was cancelled' } });
  });

  it('has no file, clock, module loading or recursion: each is a clear error', async () => {
    const file = await star.check('def f(args):\n    return open("/etc/passwd").read()\n', 'tools.star', limits);
    expect(file).toEqual({ ok: false, error: { kind: 'syntax', message: 'undefined: open', line: 2, column: 12 } });
    const clock = await star.check('def f(args):\n    return time.now()\n', 'tools.star', limits);
    expect(clock).toMatchObject({ ok: false, error: { kind: 'syntax', message: 'undefined: time', line: 2 } });
    const load = await star.check('load("net.star", "http")\n', 'tools.star', limits);
    expect(load).toMatchObject({ ok: false, error: { kind: 'runtime', message: 'load not implemented by this application', line: 1 } });
    const recursion = await star.call('def f(args):\n    return f(args)\n', 'tools.star', 'f', '{}', limits);
    expect(recursion).toMatchObject({ ok: false, error: { kind: 'runtime', message: 'function f called recursively' } });
    const loop = await star.check('def f(args):\n    while True:\n        pass\n', 'tools.star', limits);
    expect(loop).toMatchObject({ ok: false, error: { kind: 'syntax', line: 2 } });
  });

  it('reports a syntax error with its line and a Starlark error with the line that raised it', async () => {
    expect(await star.check('def f(args)\n    return 1\n', 'tools.star', limits)).toEqual({
      ok: false,
      error: { kind: 'syntax', message: "got newline, want ':'", line: 2, column: 1 },
    });
    const failed = await star.call('def f(args):\n    fail("no policy " + args["id"])\n', 'tools.star', 'f', '{"id":"P-1"}', limits);
    expect(failed).toMatchObject({ ok: false, error: { kind: 'runtime', message: 'fail: no policy P-1', line: 2 } });
  });

  it('refuses a missing function, arguments that are not JSON and a result with no JSON form', async () => {
    const source = 'def f(args):\n    return f\n';
    expect(await star.call(source, 'tools.star', 'g', '{}', limits)).toEqual({
      ok: false,
      error: { kind: 'not_found', message: 'tools.star defines no function g' },
    });
    expect(await star.call(source, 'tools.star', 'f', '{not json', limits)).toMatchObject({ ok: false, error: { kind: 'bad_args' } });
    expect(await star.call(source, 'tools.star', 'f', '{}', limits)).toMatchObject({
      ok: false,
      error: { kind: 'result', message: expect.stringContaining('f returned a function that has no JSON form') },
    });
  });

  it('runs calls side by side on its workers', async () => {
    const source = 'def double(args):\n    return args["n"] * 2\n';
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => star.call(source, 'tools.star', 'double', `{"n":${n}}`, limits)));
    expect(results.map((r) => (r.ok ? r.value : r.error.message))).toEqual(['2', '4', '6', '8', '10']);
  });
});

describe('without a build of the interpreter', () => {
  it('the build says how to build it when Go is missing; the runner then loads the prebuilt one, or none without it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'starlark-build-'));
    try {
      expect(await buildInterpreter({ env: { PATH: join(dir, 'no-bin') }, dir })).toEqual({ status: 'no-go', hint: ENABLE_STARLARK });
      expect(isInterpreterBuilt(dir)).toBe(false);
      expect(loadStarlarkRunner({ dir })?.interpreter).toEqual({
        kind: 'prebuilt',
        dir: PREBUILT_DIR,
        wasmGz: join(PREBUILT_DIR, 'starlark.wasm.gz'),
        wasmExec: join(PREBUILT_DIR, 'wasm_exec.js'),
      });
      expect(loadStarlarkRunner({ dir, prebuiltDir: join(dir, 'no-prebuilt') })).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses limits that are not positive', async () => {
    const star = loadStarlarkRunner();
    if (star === null) return;
    await expect(star.call('', 'tools.star', 'f', '{}', { maxSteps: 0, timeoutMs: 10 })).rejects.toThrow('maxSteps must be a positive integer');
    await star.close();
  });
});
