/**
 * `npm test`: the whole suite, on both cores from start to end (docs/testing.md). Lint runs beside the
 * one production build; then one vitest run takes every unit, API and hardening file on its stores
 * (files that cannot meet the store once, the rest on lowdb and on PostgreSQL); then one Playwright run
 * takes every browser spec on lowdb and the @store ones on PostgreSQL, each worker on a site of its own.
 * It ends with the slowest files, each stage's time, the log scan and one closing line.
 *
 * `npm test -- PART [args]` runs a part: unit | pg | hardening | e2e | e2e-pg | quick; the args go to
 * the part's runner (a file, `--grep ...`).
 */
import { execFileSync, spawn, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_URL_ENV, postgresBinDir, startCluster, type Cluster } from '../tests/helpers/postgres.ts';
import { knownTestSecrets, scanServerLogs } from '../tests/helpers/server-logs.ts';
import { logTails, readPlaywrightStages, readVitestStages, slowestFilesTable, stagesTable, type StageResult } from './test-summary.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const NGINX = '/usr/sbin/nginx';
const BROTLI_STATIC = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';
const PROMETHEUS = '/usr/bin/prometheus';

/** What each part runs: vitest projects (vitest.config.ts), Playwright projects (playwright.config.ts), lint. */
type Part = { lint?: boolean; vitest?: string[]; vitestFilters?: string[]; playwright?: string[]; grep?: string };
const PARTS: Record<string, Part> = {
  all: { lint: true, vitest: ['once', 'lowdb', 'pg', 'hardening-lowdb', 'hardening-pg'], playwright: ['lowdb', 'pg'] },
  unit: { vitest: ['once', 'lowdb'] },
  pg: { vitest: ['pg', 'hardening-pg'] },
  hardening: { vitest: ['hardening-lowdb', 'hardening-pg'] },
  e2e: { playwright: ['lowdb', 'pg'] },
  'e2e-pg': { playwright: ['pg'] },
  // Before a push: the unit tests on lowdb and a smoke pass in the browser (home, article, sign-in, save, publish).
  quick: { vitest: ['once', 'lowdb'], vitestFilters: ['tests/unit/', 'src/'], playwright: ['lowdb'], grep: '@smoke' },
};

/** Installs Debian's packages when `present()` fails and this runs as root; otherwise says how, and stops. */
function ensureDebianPackages(what: string, present: () => boolean, packages: string[], hint = ''): void {
  if (present()) return;
  if (process.getuid?.() === 0) {
    console.log(`${what} missing: installing Debian's ${packages.join(', ')} (apt-get)...`);
    execFileSync('apt-get', ['update'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (present()) return;
  }
  console.error(`The tests need ${what}, and it is not installed.\nInstall it with: sudo apt-get install -y ${packages.join(' ')}${hint}`);
  process.exit(1);
}

/** Runs a child with its output captured (shown when it ends), or shown as it comes; resolves with its exit code and time. */
function runChild(
  args: string[],
  options: SpawnOptions & { capture?: boolean; command?: string },
): Promise<{ code: number; seconds: number; output: string }> {
  const begun = performance.now();
  const child = spawn(options.command ?? process.execPath, args, { cwd: root, ...options, stdio: options.capture ? 'pipe' : 'inherit' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => resolve({ code: code ?? 1, seconds: (performance.now() - begun) / 1000, output })),
  );
}

const partName = process.argv[2] ?? 'all';
const part = PARTS[partName];
if (!part) {
  console.error(
    `Unknown part "${partName}": npm test runs them all, or one of ${Object.keys(PARTS)
      .filter((name) => name !== 'all')
      .join(', ')}.`,
  );
  process.exit(2);
}
const extraArgs = process.argv.slice(3);
// `--project lowdb` among them picks the projects instead of the part's (ours are `--project=NAME`: the
// option takes several values, and a file named after `--project NAME` would be read as one more).
const namesProjects = extraArgs.some((arg) => arg === '--project' || arg.startsWith('--project='));

// Chromium with the fonts the layout tests measure (API and hardening tests drive it too), and the cluster's binaries.
ensureDebianPackages(
  'Chromium',
  () => fs.existsSync(CHROMIUM),
  ['chromium', 'fonts-dejavu-core', 'fonts-liberation'],
  '   (or set CHROMIUM_PATH)',
);
ensureDebianPackages(
  "PostgreSQL's server binaries (initdb, pg_ctl)",
  () => postgresBinDir() !== undefined,
  ['postgresql'],
  '   (or set PG_BIN)',
);
if (part.vitest) {
  // The load-balancer and static-front tests run nginx; the metrics test runs Prometheus.
  ensureDebianPackages('nginx and its brotli_static module', () => fs.existsSync(NGINX) && fs.existsSync(BROTLI_STATIC), [
    'nginx',
    'libnginx-mod-http-brotli-static',
  ]);
  ensureDebianPackages('Prometheus', () => fs.existsSync(PROMETHEUS), ['prometheus']);
  // The indexer-crash test reads a stopped process's socket queues with ss.
  ensureDebianPackages('ss (iproute2)', () => fs.existsSync('/usr/bin/ss') || fs.existsSync('/bin/ss'), ['iproute2']);
}

// Every temporary folder of the run goes under one folder (TMPDIR is where os.tmpdir() and Chromium put
// theirs), removed at the end: the reports, the stores, sites and clusters of thousands of tests. Others
// may pass through it (PostgreSQL's own user to its cluster, nginx's workers to a site), not list it.
const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-reports-'));
fs.chmodSync(reports, 0o711);
// Every test server appends its output here (tests/helpers/server-logs.ts); the run scans it at the end.
const serverLogs = path.join(reports, 'server-logs');
fs.mkdirSync(serverLogs);
const vitestReport = path.join(reports, 'vitest.json');
const playwrightReport = path.join(reports, 'playwright.json');
// The suite builds into .out/test and gives every server a served folder of its own, so a site started
// with `npm start` from this checkout (dist/, DATA_DIR, port 4321) is never touched.
const env: NodeJS.ProcessEnv = {
  ...process.env,
  TEST_OUT_DIR: '.out/test',
  OUT_DIR: '.out/test',
  TMPDIR: reports,
  MERIDIAN_SERVER_LOGS: serverLogs,
  // Node's compile cache, shared by every process of the run (the runners' workers, some 200 servers
  // and their render threads, the CLIs the tests call): a module's type-stripped source and V8 code are
  // made once, not in each process that loads it. Removed with the run's folder.
  NODE_COMPILE_CACHE: path.join(reports, 'compile-cache'),
};
// Every test server's store is the suite's choice (lowdb, or a database on the run's cluster), never the shell's.
delete env.DATABASE_URL;
delete env.SERVE_DIR;
delete env.TEST_STORE;
delete env[ADMIN_URL_ENV];

// A Ctrl-C reaches the runners and this process alike: staying alive until they have stopped lets the cluster be removed.
const stayForCleanup = () => {};
process.on('SIGINT', stayForCleanup).on('SIGTERM', stayForCleanup);

const timed: { stage: string; wall: number }[] = [];
const runners: { name: string; wall: number }[] = [];
let failedSteps = 0;
let cluster: Cluster | undefined;
try {
  // The build, and lint beside it: neither fills both cores alone.
  const build = runChild(['tests/helpers/global-setup.ts'], { env, capture: true });
  const lint = part.lint ? runChild(['run', 'lint'], { env, capture: true, command: 'npm' }) : undefined;
  const built = await build;
  console.log(`\n=== build (.out/test) ===\n${built.code === 0 ? built.output.trim().split('\n').at(-1) : built.output}`);
  timed.push({ stage: 'build', wall: built.seconds });
  if (built.code !== 0) failedSteps++;
  cluster = await startCluster();
  env[ADMIN_URL_ENV] = cluster.url;
  if (lint) {
    const linted = await lint;
    console.log(`\n=== lint (astro check, eslint, prettier) ===\n${linted.output.trim()}`);
    timed.push({ stage: 'lint', wall: linted.seconds });
    if (linted.code !== 0) failedSteps++;
  }
  if (built.code === 0 && part.vitest) {
    console.log(`\n=== unit, API and hardening tests (vitest: ${part.vitest.join(', ')}) ===`);
    const projects = namesProjects ? [] : part.vitest.map((name) => `--project=${name}`);
    const vitest = await runChild(
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        ...projects,
        '--reporter=default',
        '--reporter=./tests/helpers/vitest-report.ts',
        ...(part.vitestFilters ?? []),
        ...extraArgs,
      ],
      { env: { ...env, MERIDIAN_VITEST_REPORT: vitestReport } },
    );
    runners.push({ name: 'vitest', wall: vitest.seconds });
    if (vitest.code !== 0) failedSteps++;
  }
  if (built.code === 0 && part.playwright) {
    console.log(`\n=== end-to-end tests (Playwright, Chromium: ${part.playwright.join(', ')}) ===`);
    const projects = namesProjects ? [] : part.playwright.map((name) => `--project=${name}`);
    const grep = part.grep ? ['--grep', part.grep] : [];
    const playwright = await runChild(['node_modules/@playwright/test/cli.js', 'test', ...projects, ...grep, ...extraArgs], {
      env: { ...env, PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightReport },
    });
    runners.push({ name: 'Playwright', wall: playwright.seconds });
    if (playwright.code !== 0) {
      failedSteps++;
      console.log(`\n${logTails(serverLogs, 'e2e-')}`);
    }
  }
} catch (error) {
  console.error((error as Error).message);
  failedSteps++;
} finally {
  cluster?.stop();
}

const stages: StageResult[] = [...readVitestStages(vitestReport), ...readPlaywrightStages(playwrightReport)];
runners.push({ name: 'the run', wall: (performance.now() - started) / 1000 });
console.log(`\n=== the slowest files ===\n${slowestFilesTable(stages)}`);
console.log(`\n=== the stages ===\n${stagesTable(timed, stages, runners)}`);

// The log scan: no test password, session or newsletter token, full e-mail address, cookie or bearer
// token in anything a server of this run wrote (every API, hardening and e2e server).
const leaks = scanServerLogs(serverLogs, knownTestSecrets(root));
if (leaks.length > 0) {
  console.log(`\nlog scan: ${leaks.length} line(s) in the servers' logs show what must never be logged:`);
  for (const leak of leaks.slice(0, 20)) console.log(`  ${leak.file}: ${leak.what}: ${leak.line}`);
  failedSteps++;
} else {
  console.log(`\nlog scan: ${fs.readdirSync(serverLogs).length} server log(s) of this run, nothing secret in them`);
}
fs.rmSync(reports, { recursive: true, force: true });

const failures = stages.flatMap((stage) => stage.failures);
if (failures.length > 0) console.log(`\nfailed:\n${failures.map((name) => `  ${name}`).join('\n')}`);
const count = (key: 'passed' | 'failed' | 'skipped') => stages.reduce((sum, stage) => sum + stage[key], 0);
const failed = count('failed') || failedSteps;
console.log(
  `\ntests: ${count('passed')} passed, ${failed} failed, ${count('skipped')} skipped in ${Math.round((performance.now() - started) / 1000)} s`,
);
process.exit(failedSteps > 0 || failed > 0 ? 1 : 0);
