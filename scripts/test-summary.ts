/**
 * The end of `npm test`: what each file cost (vitest's files on their stores, Playwright's specs on
 * theirs), the slowest of them, each stage's time, and the failed tests by name, read from the runners'
 * reports. A CI log is often read from its tail, so this is what it ends with.
 */
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { messagesOf } from '../tests/helpers/server.ts';
import type { VitestReport } from '../tests/helpers/vitest-report.ts';

/** One file on one store: vitest's time in its worker, or the sum of a spec's tests in Playwright. */
export type FileTime = { file: string; stage: string; seconds: number };
export type Counts = { passed: number; failed: number; skipped: number };
export type StageResult = Counts & { stage: string; files: FileTime[]; failures: string[] };

/** The stage each vitest project is (and Playwright's projects, below): the names the summary uses. */
const VITEST_STAGES: Record<string, string> = {
  once: 'unit/API, once',
  lowdb: 'unit/API, lowdb',
  pg: 'unit/API, PostgreSQL',
  'hardening-lowdb': 'hardening, lowdb',
  'hardening-pg': 'hardening, PostgreSQL',
};
const PLAYWRIGHT_STAGES: Record<string, string> = { lowdb: 'e2e, lowdb', pg: 'e2e, PostgreSQL' };

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** vitest's files grouped by stage, from tests/helpers/vitest-report.ts's JSON. */
export function readVitestStages(file: string): StageResult[] {
  const report = readJson<VitestReport>(file);
  if (!report) return [];
  const stages = new Map<string, StageResult>();
  for (const result of report.files) {
    const stage = VITEST_STAGES[result.project] ?? result.project;
    let entry = stages.get(stage);
    if (!entry) stages.set(stage, (entry = { stage, passed: 0, failed: 0, skipped: 0, files: [], failures: [] }));
    entry.passed += result.passed;
    entry.failed += result.failed;
    entry.skipped += result.skipped;
    entry.files.push({ file: result.file, stage, seconds: result.seconds });
    for (const failure of result.failures) entry.failures.push(`${stage}: ${result.file} > ${failure}`);
    // A file that failed outside its tests has no failed test to count.
    if (result.failed === 0 && result.failures.length > 0) entry.failed++;
  }
  const errors = report.errors.map((error) => `vitest: an error outside any test: ${error}`);
  if (errors.length > 0)
    stages.set('vitest', { stage: 'vitest', passed: 0, failed: errors.length, skipped: 0, files: [], failures: errors });
  return [...stages.values()];
}

/** The parts of Playwright's JSON report read here. */
interface PlaywrightSuite {
  file?: string;
  suites?: PlaywrightSuite[];
  specs?: {
    title: string;
    line?: number;
    tests: { status?: string; projectName?: string; results?: { duration?: number; error?: { message?: string } }[] }[];
  }[];
}

/** Playwright's specs grouped by stage (its project), each file's time the sum of its tests'. */
export function readPlaywrightStages(file: string): StageResult[] {
  const report = readJson<{ suites?: PlaywrightSuite[] }>(file);
  if (!report) return [];
  const stages = new Map<string, StageResult>();
  const seconds = new Map<string, FileTime>();
  const walk = (suite: PlaywrightSuite, specFile: string | undefined) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests) {
        const stage = PLAYWRIGHT_STAGES[test.projectName ?? ''] ?? `e2e, ${test.projectName}`;
        let entry = stages.get(stage);
        if (!entry) stages.set(stage, (entry = { stage, passed: 0, failed: 0, skipped: 0, files: [], failures: [] }));
        const where = `tests/e2e/${specFile ?? '?'}`;
        const key = `${stage}\0${where}`;
        let time = seconds.get(key);
        if (!time) {
          seconds.set(key, (time = { file: where, stage, seconds: 0 }));
          entry.files.push(time);
        }
        time.seconds += (test.results ?? []).reduce((sum, result) => sum + (result.duration ?? 0), 0) / 1000;
        if (test.status === 'expected') entry.passed++;
        else if (test.status === 'skipped') entry.skipped++;
        else {
          entry.failed++;
          const error = test.results?.find((result) => result.error?.message)?.error?.message;
          entry.failures.push(`${stage}: ${where}:${spec.line ?? 0} > ${spec.title} (${test.status})${reason(error)}`);
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, suite.file ?? specFile);
  };
  for (const suite of report.suites ?? []) walk(suite, suite.file);
  return [...stages.values()];
}

/** The first line of a failure's message, without colours: a CI log is often only its tail. */
function reason(message: string | undefined): string {
  const line = stripVTControlCharacters(message ?? '')
    .split('\n')
    .find((l) => l.trim() !== '');
  return line ? `: ${line.trim().slice(0, 240)}` : '';
}

const seconds = (value: number) => `${value.toFixed(1)} s`;

/** A Markdown table: readable in a terminal, and docs/testing.md takes it as it is. */
function table(head: string[], rows: string[][], right: number[]): string {
  const widths = head.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (right.includes(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (right.includes(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(head), rule, ...rows.map(line)].join('\n');
}

/** The slowest files of the run, each with its share of all files' time (files run side by side, so that is not the wall time). */
export function slowestFilesTable(stages: StageResult[], count = 25): string {
  const files = stages.flatMap((stage) => stage.files);
  const total = files.reduce((sum, file) => sum + file.seconds, 0);
  const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, count);
  return table(
    ['file', 'store', 'seconds', 'share'],
    slowest.map((file) => [
      file.file,
      file.stage.replace(/^.*, /, ''),
      file.seconds.toFixed(1),
      `${total > 0 ? ((100 * file.seconds) / total).toFixed(1) : '0.0'}%`,
    ]),
    [2, 3],
  );
}

/** Each stage: its tests and the sum of its files' times; the wall time of each runner (its stages run side by side) and of the run. */
export function stagesTable(
  timed: { stage: string; wall: number }[],
  stages: StageResult[],
  runners: { name: string; wall: number }[],
): string {
  const rows = [
    ...timed.map((entry) => [entry.stage, '', seconds(entry.wall), '']),
    ...stages.map((stage) => [
      stage.stage,
      String(stage.files.length),
      seconds(stage.files.reduce((sum, file) => sum + file.seconds, 0)),
      `${stage.passed} passed, ${stage.failed} failed, ${stage.skipped} skipped`,
    ]),
    ...runners.map((runner) => [`${runner.name} (wall)`, '', seconds(runner.wall), '']),
  ];
  return table(['stage', 'files', 'time', 'tests'], rows, [1, 2]);
}

/** The last messages of each log whose name starts with `prefix`: shown when the browser specs failed. */
export function logTails(dir: string, prefix: string, lines = 20): string {
  if (!fs.existsSync(dir)) return '';
  return fs
    .readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => {
      const tail = messagesOf(fs.readFileSync(path.join(dir, name), 'utf8'))
        .trimEnd()
        .split('\n')
        .slice(-lines);
      return `--- the last ${tail.length} lines of ${name} ---\n${tail.join('\n')}`;
    })
    .join('\n');
}
