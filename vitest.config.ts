import { defineConfig } from 'vitest/config';

// One vitest run covers unit, conformance, app and e2e tiers (STYLE §5).
export default defineConfig({
  test: {
    include: ['libs/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tests/**/*.test.ts', 'bench/**/*.test.ts'],
    // Generous: e2e tests boot whole platforms, three files at a time on two cores (maxWorkers).
    testTimeout: 90_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // global.gc for the memory checks (apps/platform/src/fuzz/route-fuzz.test.ts): a heap measured
    // after a full collection, not whatever garbage happened to be around.
    execArgv: ['--expose-gc'],
    // Vitest's default is one worker per core less one: a single worker on a 2-core CI machine,
    // where most e2e files spend their time waiting on the processes they start. Three workers ran
    // the whole suite in 559 s (docs/performance.md "Test suite").
    maxWorkers: 3,
    // Test files of one worker share its module cache instead of each loading the platform's
    // modules again in a fresh process: importing summed to 669-1,100 s over the workers, about
    // 50 s this way, and the suite's wall time fell by a third (docs/performance.md "Test suite").
    // A file that changes process-wide state puts it back when it ends (environment variables,
    // the working directory, OpenTelemetry's global registrations, which `startTelemetry`'s
    // shutdown releases).
    isolate: false,
    reporters: ['default', './tests/support/summary-reporter.ts'],
  },
});
