import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    pool: 'forks',
    // Two files at once even on 2 vCPUs (vitest's default is CPUs − 1 = 1): most of a file's time
    // is waiting on PostgreSQL, child processes and timers. Node 24 suite 455 → 348 s (docs/tests.md).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/requireTestsReporter.ts'],
  },
});
