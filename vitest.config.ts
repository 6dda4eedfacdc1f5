import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    pool: 'forks',
    // Test files share a worker's module graph instead of re-importing the app per file: the suite
    // runs about a third faster (CI runs it four times). Tests keep no module-level state.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/requireTestsReporter.ts'],
  },
});
