import { defineConfig } from 'vitest/config';

// One vitest run covers unit, conformance, app and e2e tiers (STYLE §5).
export default defineConfig({
  test: {
    include: ['libs/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tests/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './tests/support/summary-reporter.ts'],
  },
});
