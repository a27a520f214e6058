/**
 * A vitest reporter for `npm test`'s summary: each file's project, the seconds it took in its worker,
 * its counts and its failures, written as JSON to MERIDIAN_VITEST_REPORT when the run ends.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, SerializedError, TestModule } from 'vitest/node';
import { ROOT } from './server.ts';

export type FileReport = {
  project: string;
  file: string;
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
  /** `name: the error in a line`, for each failed test and describe block, or for the file when it failed outside them. */
  failures: string[];
};
export type VitestReport = { files: FileReport[]; errors: string[] };

/**
 * An error's message in a line: its first line, and its last when there are more (an `expect(code,
 * output)` puts a script's whole output first and the failed expectation last), at most 300 characters.
 */
function gist(error: { message?: string } | undefined): string {
  const lines = (error?.message ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const line = lines.length > 1 ? `${lines[0]} … ${lines.at(-1)}` : (lines[0] ?? '');
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

export default class RunReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const out = process.env.MERIDIAN_VITEST_REPORT;
    if (!out) return;
    const files = modules.map((module): FileReport => {
      const tests = [...module.children.allTests()];
      const failedTests = tests.filter((test) => test.result().state === 'failed');
      const failures = failedTests.map((test) => `${test.fullName}: ${gist(test.result().errors?.[0])}`);
      // A hook of a describe block that failed (its beforeAll, say) skips the block's tests: its error is the block's.
      for (const suite of module.children.allSuites())
        for (const error of suite.errors()) failures.push(`${suite.fullName}: ${gist(error)}`);
      // A file that failed outside its tests and blocks (an import, a top-level hook) names its own error.
      if (failures.length === 0 && module.state() === 'failed')
        failures.push(`${gist(module.errors()[0]) || 'did not finish (its worker ended or the run stopped)'}`);
      const d = module.diagnostic();
      return {
        project: module.project.name,
        file: path.relative(ROOT, module.moduleId),
        seconds: (d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration) / 1000,
        passed: tests.filter((test) => test.result().state === 'passed').length,
        failed: failedTests.length,
        skipped: tests.filter((test) => test.result().state === 'skipped').length,
        failures,
      };
    });
    const report: VitestReport = { files, errors: unhandledErrors.map((error) => gist(error)) };
    fs.writeFileSync(out, JSON.stringify(report));
  }
}
