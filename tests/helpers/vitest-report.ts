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
  /** `name: first line of the error`, for each failed test, or for the file when it failed outside a test. */
  failures: string[];
};
export type VitestReport = { files: FileReport[]; errors: string[] };

/** The first non-empty line of an error's message. */
function firstLine(error: { message?: string } | undefined): string {
  return (
    (error?.message ?? '')
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? ''
  );
}

export default class RunReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const out = process.env.MERIDIAN_VITEST_REPORT;
    if (!out) return;
    const files = modules.map((module): FileReport => {
      const tests = [...module.children.allTests()];
      const failedTests = tests.filter((test) => test.result().state === 'failed');
      const failures = failedTests.map((test) => `${test.fullName}: ${firstLine(test.result().errors?.[0])}`);
      // A file that failed outside its tests (an import, a beforeAll) names its own error.
      if (failures.length === 0 && module.state() === 'failed')
        failures.push(`${firstLine(module.errors()[0]) || 'did not finish (its worker ended or the run stopped)'}`);
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
    const report: VitestReport = { files, errors: unhandledErrors.map((error) => firstLine(error)) };
    fs.writeFileSync(out, JSON.stringify(report));
  }
}
