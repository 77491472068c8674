/**
 * The loader the platform's processes run their TypeScript with, as `npm start` does
 * (scripts/ts-loader/register.mjs: esbuild without `keepNames`, cached on disk), by absolute URL so
 * that a child process may run in any directory. Tests that start a platform process use it, so
 * they run what a user runs; test fixtures and scripts keep tsx.
 */
export const PLATFORM_LOADER = new URL('../../../scripts/ts-loader/register.mjs', import.meta.url).href;
