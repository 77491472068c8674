import { DEFAULT_BUILD_DIR, ENABLE_STARLARK, isInterpreterBuilt } from './interpreter-build.ts';
import { loadStarlarkRunner, type WasmStarlarkRunner } from './wasm-starlark-runner.ts';

/**
 * Where the tests look for the interpreter: `STARLARK_TEST_BUILD_DIR` when set (a missing
 * directory shows what a machine without Go does, without deleting the build), else the build
 * `npm install` made. The platform processes the e2e tests start always use the latter.
 */
export function starlarkTestBuildDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.STARLARK_TEST_BUILD_DIR ?? DEFAULT_BUILD_DIR;
}

/**
 * The one rule for every test that needs the Starlark interpreter (a starlark skill's checks or
 * tools, an agent calling one; STYLE §5): built, true; missing under `CI=true`, it throws, so the
 * suite fails instead of skipping; missing elsewhere, it prints why `suite` is skipped and how to
 * build it, and returns false, for `describe.skipIf(!starlark)`.
 */
export function requireStarlark(suite: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (isInterpreterBuilt(starlarkTestBuildDir(env))) return true;
  const reason = `the Starlark interpreter is not built (run: ${ENABLE_STARLARK})`;
  if (env.CI === 'true') throw new Error(`${suite}: ${reason}; CI must build it`);
  console.warn(`skipping ${suite}: ${reason}`);
  return false;
}

/** The built interpreter for a test suite, by `requireStarlark`'s rule: null when skipped. */
export function requireStarlarkRunner(suite = 'the starlark suites'): WasmStarlarkRunner | null {
  return requireStarlark(suite) ? loadStarlarkRunner({ dir: starlarkTestBuildDir() }) : null;
}
