import { DEFAULT_BUILD_DIR, ENABLE_STARLARK } from './interpreter-build.ts';
import { findInterpreter, PREBUILT_DIR } from './prebuilt.ts';
import { loadStarlarkRunner, type WasmStarlarkRunner } from './wasm-starlark-runner.ts';

/**
 * Where the tests look for this machine's build of the interpreter: `STARLARK_TEST_BUILD_DIR`
 * when set (a missing directory shows what a machine without Go does: it runs the prebuilt
 * interpreter), else the build `npm install` made. The platform processes the e2e tests start
 * always use the defaults.
 */
export function starlarkTestBuildDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.STARLARK_TEST_BUILD_DIR ?? DEFAULT_BUILD_DIR;
}

/**
 * Where the tests look for the committed prebuilt interpreter: `STARLARK_TEST_PREBUILT_DIR` when
 * set (a missing directory, with a missing build dir, shows a checkout with no interpreter at
 * all), else libs/starlark/prebuilt.
 */
export function starlarkTestPrebuiltDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.STARLARK_TEST_PREBUILT_DIR ?? PREBUILT_DIR;
}

/**
 * The one rule for every test that needs the Starlark interpreter (a starlark skill's checks or
 * tools, an agent calling one; STYLE §5): built or prebuilt, true; missing (neither), under
 * `CI=true` it throws, so the suite fails instead of skipping; missing elsewhere, it prints why
 * `suite` is skipped and how to get it, and returns false, for `describe.skipIf(!starlark)`.
 */
export function requireStarlark(suite: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const location = { dir: starlarkTestBuildDir(env), prebuiltDir: starlarkTestPrebuiltDir(env) };
  if (findInterpreter(location) !== null) return true;
  const reason = `the Starlark interpreter is missing, neither built nor prebuilt (restore libs/starlark/prebuilt, or run: ${ENABLE_STARLARK})`;
  if (env.CI === 'true') throw new Error(`${suite}: ${reason}; CI must have it`);
  console.warn(`skipping ${suite}: ${reason}`);
  return false;
}

/** The interpreter for a test suite, by `requireStarlark`'s rule: null when skipped. */
export function requireStarlarkRunner(suite = 'the starlark suites'): WasmStarlarkRunner | null {
  return requireStarlark(suite)
    ? loadStarlarkRunner({ dir: starlarkTestBuildDir(), prebuiltDir: starlarkTestPrebuiltDir() })
    : null;
}
