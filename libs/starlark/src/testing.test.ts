import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isInterpreterBuilt } from './interpreter-build.ts';
import { requireStarlark } from './testing.ts';

// The rule every Starlark-dependent test follows, with the lookup pointed at a directory holding
// no interpreter (the build itself is left alone): fail under CI=true, skip with a reason elsewhere.
describe('requireStarlark', () => {
  let missing: string;
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-starlark-'));
    missing = join(dir, 'no-build');
    return () => rm(dir, { recursive: true, force: true });
  });
  afterAll(() => vi.restoreAllMocks());

  it('fails the suite under CI=true when the interpreter is missing, naming the suite and the fix', () => {
    expect(() =>
      requireStarlark('the tracing tests', { CI: 'true', STARLARK_TEST_BUILD_DIR: missing }),
    ).toThrow(
      'the tracing tests: the Starlark interpreter is not built (run: apt-get install golang-go golang-starlark-dev && npm install); CI must build it',
    );
  });

  it('skips it elsewhere, printing why', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(requireStarlark('the tracing tests', { STARLARK_TEST_BUILD_DIR: missing })).toBe(false);
    expect(warn).toHaveBeenCalledWith(
      'skipping the tracing tests: the Starlark interpreter is not built (run: apt-get install golang-go golang-starlark-dev && npm install)',
    );
  });

  // This machine's own answer, by the same rule: a machine without Go skips it, CI fails it.
  it.skipIf(!requireStarlark('the check of a built interpreter'))(
    'runs it where the interpreter is built, CI or not',
    () => {
      expect(isInterpreterBuilt()).toBe(true);
      expect(requireStarlark('x', { CI: 'true' })).toBe(true);
      expect(requireStarlark('x', {})).toBe(true);
    },
  );
});
