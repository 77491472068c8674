import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findInterpreter } from './prebuilt.ts';
import { requireStarlark } from './testing.ts';

const MISSING =
  'the Starlark interpreter is missing, neither built nor prebuilt (restore libs/starlark/prebuilt, or run: apt-get install golang-go golang-starlark-dev && npm install)';

// The rule every Starlark-dependent test follows, with the lookup pointed at directories holding
// no interpreter (the build and the prebuilt one are left alone): fail under CI=true, skip with a
// reason elsewhere.
describe('requireStarlark', () => {
  let missing: string;
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-starlark-'));
    missing = join(dir, 'no-build');
    return () => rm(dir, { recursive: true, force: true });
  });
  afterAll(() => vi.restoreAllMocks());

  it('fails the suite under CI=true when no interpreter is there, naming the suite and the fix', () => {
    const env = { CI: 'true', STARLARK_TEST_BUILD_DIR: missing, STARLARK_TEST_PREBUILT_DIR: missing };
    expect(() => requireStarlark('the tracing tests', env)).toThrow(`the tracing tests: ${MISSING}; CI must have it`);
  });

  it('skips it elsewhere, printing why', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(requireStarlark('the tracing tests', { STARLARK_TEST_BUILD_DIR: missing, STARLARK_TEST_PREBUILT_DIR: missing })).toBe(false);
    expect(warn).toHaveBeenCalledWith(`skipping the tracing tests: ${MISSING}`);
  });

  it('runs it on the prebuilt interpreter where nothing was built (a machine without Go), CI or not', () => {
    expect(findInterpreter({ dir: missing })).toMatchObject({ kind: 'prebuilt' });
    expect(requireStarlark('x', { CI: 'true', STARLARK_TEST_BUILD_DIR: missing })).toBe(true);
    expect(requireStarlark('x', { STARLARK_TEST_BUILD_DIR: missing })).toBe(true);
  });

  // This machine's own answer, by the same rule: a checkout without the prebuilt interpreter and
  // without Go skips it, CI fails it.
  it.skipIf(!requireStarlark('the check of an available interpreter'))('runs it where an interpreter is there', () => {
    expect(findInterpreter()).not.toBeNull();
    expect(requireStarlark('x', { CI: 'true' })).toBe(true);
    expect(requireStarlark('x', {})).toBe(true);
  });
});
