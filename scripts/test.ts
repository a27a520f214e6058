/**
 * `npm test`: the whole suite. Makes sure Debian's Chromium and PostgreSQL are there (installing them
 * when run as root), builds once, runs vitest (unit + API, hardening) on the lowdb store, then again
 * on PostgreSQL (TEST_STORE=pg), then Playwright (e2e) against a server on lowdb, then again against
 * a server on PostgreSQL, and prints one closing line.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { createDatabase, postgresBinDir, startCluster, type Cluster } from '../tests/helpers/postgres.ts';
import { knownTestSecrets, scanServerLogs } from '../tests/helpers/server-logs.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM)) return;
  if (process.getuid?.() === 0) {
    console.log("Chromium is missing: installing Debian's chromium package (apt-get)...");
    execFileSync('apt-get', ['update'], { stdio: 'inherit' });
    // The fonts the browser tests check wide faces and fallbacks with (the site itself self-hosts its fonts).
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium', 'fonts-dejavu-core', 'fonts-liberation'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (fs.existsSync(CHROMIUM)) return;
  }
  console.error(
    `The end-to-end tests need Chromium at ${CHROMIUM}, and it is not installed.\n` +
      'Install it with: sudo apt-get install -y chromium   (or set CHROMIUM_PATH to a Chromium binary)',
  );
  process.exit(1);
}

/** The tests start their own PostgreSQL cluster with Debian's initdb and pg_ctl (tests/helpers/postgres.ts). */
function ensurePostgres(): void {
  if (postgresBinDir()) return;
  if (process.getuid?.() === 0) {
    console.log("PostgreSQL is missing: installing Debian's postgresql package (apt-get)...");
    execFileSync('apt-get', ['update'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (postgresBinDir()) return;
  }
  console.error(
    "The tests need PostgreSQL's server binaries (initdb, pg_ctl), and they are not installed.\nInstall them with: sudo apt-get install -y postgresql   (or set PG_BIN to their folder)",
  );
  process.exit(1);
}

const NGINX = '/usr/sbin/nginx';
const BROTLI_STATIC = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';

/** The load-balancer and static-front tests run Debian's nginx (with its brotli_static module) as a child process. */
function ensureNginx(): void {
  if (fs.existsSync(NGINX) && fs.existsSync(BROTLI_STATIC)) return;
  if (process.getuid?.() === 0) {
    console.log("nginx is missing: installing Debian's nginx and libnginx-mod-http-brotli-static packages (apt-get)...");
    execFileSync('apt-get', ['update'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'nginx', 'libnginx-mod-http-brotli-static'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (fs.existsSync(NGINX) && fs.existsSync(BROTLI_STATIC)) return;
  }
  console.error(
    'The load-balancer tests need nginx and its brotli_static module, and they are not installed.\nInstall them with: sudo apt-get install -y nginx libnginx-mod-http-brotli-static',
  );
  process.exit(1);
}

const PROMETHEUS = '/usr/bin/prometheus';

/** The metrics test runs Debian's Prometheus as a child process that scrapes a test server. */
function ensurePrometheus(): void {
  if (fs.existsSync(PROMETHEUS)) return;
  if (process.getuid?.() === 0) {
    console.log("Prometheus is missing: installing Debian's prometheus package (apt-get)...");
    execFileSync('apt-get', ['update'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (fs.existsSync(PROMETHEUS)) return;
  }
  console.error('The metrics tests need Prometheus, and it is not installed.\nInstall it with: sudo apt-get install -y prometheus');
  process.exit(1);
}

/**
 * Runs Playwright with its own output shown as usual. Its web server's lines (`[WebServer] ...`, the
 * e2e server's log: an access line per request) go to `logFile` instead, for the log scan at the end
 * of the run; their tail is shown when the run fails.
 */
function runPlaywright(label: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<number> {
  console.log(`\n=== ${label} ===`);
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['inherit', 'pipe', 'inherit'], env });
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    const server = lines.filter((line) => line.startsWith('[WebServer] '));
    const own = lines.filter((line) => !line.startsWith('[WebServer] '));
    if (server.length) fs.appendFileSync(logFile, `${server.join('\n')}\n`);
    if (own.length) process.stdout.write(`${own.join('\n')}\n`);
  });
  return new Promise((resolve) =>
    child.once('close', (code) => {
      if (partial) process.stdout.write(`${partial}\n`);
      if (code !== 0 && fs.existsSync(logFile)) {
        const tail = fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-40);
        console.log(`\n--- the e2e server's last ${tail.length} log lines ---\n${tail.join('\n')}`);
      }
      resolve(code ?? 1);
    }),
  );
}

function run(label: string, args: string[], env: NodeJS.ProcessEnv): number {
  console.log(`\n=== ${label} ===`);
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env });
  return result.status ?? 1;
}

ensureChromium();
ensureNginx();
ensurePostgres();
ensurePrometheus();
// The JSON reports, the e2e servers' data folders and every test's temporary folder; removed when the run ends.
const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-reports-'));
function e2eDataDir(name: string): string {
  const dir = path.join(reports, name);
  fs.mkdirSync(dir);
  return dir;
}
const only = process.argv[2]; // optional: unit | hardening | pg | e2e | e2e-pg
// After e2e or e2e-pg: Playwright's own arguments, e.g. one spec file (`node scripts/test.ts e2e-pg tests/e2e/a11y.spec.ts`).
const playwrightArgs = only === 'e2e' || only === 'e2e-pg' ? process.argv.slice(3) : [];
// The suite builds into .out/ and gives every server a served folder of its own, so a site started
// with `npm start` from this checkout (dist/, DATA_DIR, port 4321) is never touched.
const TEST_OUT_DIR = '.out/test';
// Every temporary folder of the run goes under the reports' folder too (TMPDIR is where os.tmpdir()
// and Chromium put theirs): the stores, sites and clusters of thousands of tests, removed with it at
// the end instead of left in /tmp by every run. Others may pass through it (PostgreSQL's own user to
// its cluster, nginx's workers to a site), not list it.
fs.chmodSync(reports, 0o711);
// Every test server appends its output here (tests/helpers/server-logs.ts); the run scans it at the end.
const serverLogs = path.join(reports, 'server-logs');
fs.mkdirSync(serverLogs);
const env: NodeJS.ProcessEnv = { ...process.env, MERIDIAN_BUILT: '0', TEST_OUT_DIR, TMPDIR: reports, MERIDIAN_SERVER_LOGS: serverLogs };
delete env.SERVE_DIR;
// Every test server's store is the suite's choice (lowdb, or a database on the suite's own cluster),
// never a database named in the shell.
delete env.DATABASE_URL;

let failedRuns = 0;
if (only === undefined || only === 'unit') {
  failedRuns +=
    run(
      'unit and API tests (vitest)',
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        '--reporter=default',
        `--reporter=json`,
        `--outputFile.json=${path.join(reports, 'vitest.json')}`,
      ],
      env,
    ) === 0
      ? 0
      : 1;
}
if (only === undefined || only === 'hardening') {
  // The adversarial suite reuses the build the first run made (or makes its own when run alone).
  const reuse = only === undefined ? { MERIDIAN_BUILT: '1' } : { TEST_OUT_DIR: '.out/hardening' };
  failedRuns +=
    run(
      'hardening suite (vitest)',
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        '--config',
        'vitest.hardening.config.ts',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${path.join(reports, 'hardening.json')}`,
      ],
      { ...env, ...reuse },
    ) === 0
      ? 0
      : 1;
}
// The same suites on the PostgreSQL store: every test server and unit runtime gets a database of its own.
if (only === undefined || only === 'pg') {
  const pg = { ...env, TEST_STORE: 'pg', MERIDIAN_BUILT: only === undefined ? '1' : '0' };
  failedRuns +=
    run(
      'unit and API tests on PostgreSQL (vitest, TEST_STORE=pg)',
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${path.join(reports, 'vitest-pg.json')}`,
      ],
      pg,
    ) === 0
      ? 0
      : 1;
  failedRuns +=
    run(
      'hardening suite on PostgreSQL (vitest, TEST_STORE=pg)',
      [
        'node_modules/vitest/vitest.mjs',
        'run',
        '--config',
        'vitest.hardening.config.ts',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${path.join(reports, 'hardening-pg.json')}`,
      ],
      { ...pg, MERIDIAN_BUILT: '1' },
    ) === 0
      ? 0
      : 1;
}
if (only === undefined || only === 'e2e') {
  failedRuns +=
    (await runPlaywright(
      'end-to-end tests (Playwright, Chromium)',
      ['node_modules/@playwright/test/cli.js', 'test', ...playwrightArgs],
      {
        ...env,
        E2E_DATA_DIR: e2eDataDir('e2e-data'),
        PLAYWRIGHT_JSON_OUTPUT_NAME: path.join(reports, 'playwright.json'),
      },
      path.join(serverLogs, 'e2e-server.log'),
    )) === 0
      ? 0
      : 1;
}
// The same specs against a server on PostgreSQL: a cluster of its own, one database the server seeds,
// built into a folder of its own (.out/e2e-pg). The cluster is removed even when a spec fails.
if (only === undefined || only === 'e2e-pg') failedRuns += await e2eOnPostgres();

async function e2eOnPostgres(): Promise<number> {
  // A Ctrl-C reaches Playwright and this process alike, and by default Node would end this one at once
  // and leave the cluster running. Listening keeps it alive until initdb and Playwright (run synchronously
  // below) have stopped and the cluster is gone; the interrupted pass then counts as failed.
  const stayForCleanup = () => {};
  process.on('SIGINT', stayForCleanup).on('SIGTERM', stayForCleanup);
  let cluster: Cluster;
  try {
    cluster = await startCluster();
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
  try {
    const databaseUrl = await createDatabase(cluster.url, 'e2e');
    return (await runPlaywright(
      'end-to-end tests on PostgreSQL (Playwright, Chromium, E2E_DATABASE_URL)',
      ['node_modules/@playwright/test/cli.js', 'test', ...playwrightArgs],
      {
        ...env,
        E2E_DATABASE_URL: databaseUrl,
        E2E_DATA_DIR: e2eDataDir('e2e-pg-data'),
        E2E_OUT_DIR: '.out/e2e-pg',
        PLAYWRIGHT_JSON_OUTPUT_NAME: path.join(reports, 'playwright-pg.json'),
      },
      path.join(serverLogs, 'e2e-pg-server.log'),
    )) === 0
      ? 0
      : 1;
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  } finally {
    cluster.stop();
  }
}

/** The parts of vitest's and Playwright's JSON reports read here. */
interface Report {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  testResults?: {
    name: string;
    status?: string;
    message?: string;
    assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
  stats?: { expected?: number; unexpected?: number; flaky?: number; skipped?: number };
  suites?: PlaywrightSuite[];
}
interface PlaywrightSuite {
  file?: string;
  suites?: PlaywrightSuite[];
  specs?: {
    title: string;
    line?: number;
    tests: { status?: string; projectName?: string; results?: { error?: { message?: string } }[] }[];
  }[];
}
function counts(file: string, pick: (data: Report) => { passed: number; failed: number; skipped: number }) {
  try {
    return pick(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return { passed: 0, failed: 0, skipped: 0 };
  }
}
const vitestCounts = (d: Report) => ({
  passed: d.numPassedTests ?? 0,
  failed: d.numFailedTests ?? 0,
  skipped: (d.numPendingTests ?? 0) + (d.numTodoTests ?? 0),
});
const unit = counts(path.join(reports, 'vitest.json'), vitestCounts);
const hardening = counts(path.join(reports, 'hardening.json'), vitestCounts);
const unitPg = counts(path.join(reports, 'vitest-pg.json'), vitestCounts);
const hardeningPg = counts(path.join(reports, 'hardening-pg.json'), vitestCounts);
const runs = [unit, hardening, unitPg, hardeningPg];
const vitest = {
  passed: runs.reduce((n, r) => n + r.passed, 0),
  failed: runs.reduce((n, r) => n + r.failed, 0),
  skipped: runs.reduce((n, r) => n + r.skipped, 0),
};
const playwrightCounts = (d: Report) => ({
  passed: d.stats?.expected ?? 0,
  failed: (d.stats?.unexpected ?? 0) + (d.stats?.flaky ?? 0),
  skipped: d.stats?.skipped ?? 0,
});
const e2eRuns = [
  counts(path.join(reports, 'playwright.json'), playwrightCounts),
  counts(path.join(reports, 'playwright-pg.json'), playwrightCounts),
];
const e2e = {
  passed: e2eRuns.reduce((n, r) => n + r.passed, 0),
  failed: e2eRuns.reduce((n, r) => n + r.failed, 0),
  skipped: e2eRuns.reduce((n, r) => n + r.skipped, 0),
};
/** The first line of a failure's message, without colours, for the summary: a CI log is often only its tail. */
function reason(message: string | undefined): string {
  const line = stripVTControlCharacters(message ?? '')
    .split('\n')
    .find((l) => l.trim() !== '');
  return line ? `: ${line.trim().slice(0, 240)}` : '';
}
/** Names of the failed tests, so the last lines of a long log say which ones (a CI log is often read from its tail). */
function failures(file: string, pass: string): string[] {
  let data: Report;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const result of data.testResults ?? []) {
    const where = path.relative(root, result.name);
    const failed = (result.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failed) names.push(`${pass}: ${where} > ${a.fullName}${reason(a.failureMessages?.[0])}`);
    if (failed.length === 0 && result.status === 'failed') {
      // Vitest gives an empty message for a file that never finished (its worker ended, or the run stopped).
      names.push(`${pass}: ${where}${reason(result.message) || ': did not finish (its worker ended or the run stopped)'}`);
    }
  }
  const walk = (suite: PlaywrightSuite, file: string | undefined) => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests) {
        if (test.status === 'unexpected' || test.status === 'flaky') {
          const error = test.results?.find((r) => r.error?.message)?.error?.message;
          names.push(`${pass}: ${file ?? '?'}:${spec.line ?? 0} > ${spec.title} (${test.status})${reason(error)}`);
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, suite.file ?? file);
  };
  for (const suite of data.suites ?? []) walk(suite, suite.file);
  return names;
}
const failedNames = [
  ...failures(path.join(reports, 'vitest.json'), 'unit/API, lowdb'),
  ...failures(path.join(reports, 'hardening.json'), 'hardening, lowdb'),
  ...failures(path.join(reports, 'vitest-pg.json'), 'unit/API, PostgreSQL'),
  ...failures(path.join(reports, 'hardening-pg.json'), 'hardening, PostgreSQL'),
  ...failures(path.join(reports, 'playwright.json'), 'e2e, lowdb'),
  ...failures(path.join(reports, 'playwright-pg.json'), 'e2e, PostgreSQL'),
];
// The log scan: no test password, session or newsletter token, full e-mail address, cookie or
// bearer token in anything a server of this run wrote (every API, hardening and e2e server).
const logFiles = fs.readdirSync(serverLogs).length;
const leaks = scanServerLogs(serverLogs, knownTestSecrets(root));
if (leaks.length > 0) {
  console.log(`\nlog scan: ${leaks.length} line(s) in the servers' logs show what must never be logged:`);
  for (const leak of leaks.slice(0, 20)) console.log(`  ${leak.file}: ${leak.what}: ${leak.line}`);
  failedRuns++;
} else {
  console.log(`\nlog scan: ${logFiles} server log(s) of this run, nothing secret in them`);
}
const passed = vitest.passed + e2e.passed;
const failed = vitest.failed + e2e.failed + (failedRuns > 0 && vitest.failed + e2e.failed === 0 ? failedRuns : 0);
fs.rmSync(reports, { recursive: true, force: true });
if (failedNames.length > 0) console.log(`\nfailed:\n${failedNames.map((name) => `  ${name}`).join('\n')}`);
console.log(`\ntests: ${passed} passed, ${failed} failed, ${vitest.skipped + e2e.skipped} skipped`);
process.exit(failedRuns > 0 || failed > 0 ? 1 : 0);
