// Fails the run when no test passed: a suite that silently runs nothing (every file skipped, a
// filter matching nothing) must not look green in CI.
import type { Reporter, TestModule } from 'vitest/node';

export default class RequireTestsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) if (test.result().state === 'passed') passed += 1;
    }
    if (passed === 0) {
      process.stderr.write('\nNo test passed: refusing to report success for a run that executed nothing.\n');
      process.exitCode = 1;
    }
  }
}
