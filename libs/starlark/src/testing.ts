import { ENABLE_STARLARK } from './interpreter-build.ts';
import { loadStarlarkRunner, type WasmStarlarkRunner } from './wasm-starlark-runner.ts';

/**
 * The built interpreter for a test suite (STYLE §5): missing under `CI=true`, it throws, so the
 * suite fails instead of skipping; missing elsewhere, it warns and returns null, for
 * `describe.skipIf(runner === null)`.
 */
export function requireStarlarkRunner(): WasmStarlarkRunner | null {
  const runner = loadStarlarkRunner();
  if (runner !== null) return runner;
  const reason = `the Starlark interpreter is not built (run: ${ENABLE_STARLARK})`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI must build it`);
  console.warn(`skipping the starlark suites: ${reason}`);
  return null;
}
