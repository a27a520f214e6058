/**
 * `node bench/lab/shared-redraw.ts [--articles N]` (issue 47, part 4): how long servers on one
 * PostgreSQL database take to draw every page again for a new build (the start after a deploy), one
 * server alone against two sharing the batches. Each server is pinned to a core of its own
 * (`taskset`), as if each had a machine, with one render thread. The old build's pages are the served
 * files with their footer changed, so every page is written again, as after a template change. Writes
 * bench/results/shared-redraw.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../../tests/helpers/postgres.ts';
import { createPool } from '../../src/store/pg/db.ts';
import { isRegenerablePath } from '../../src/server/publishing/paths.ts';
import { renderStateFileFor, updateRenderStateHeader } from '../../src/server/publishing/render-state.ts';
import { SERVER_NODE_FLAGS, waitForListening } from '../../scripts/server-process.ts';
import { generateStore } from '../generate-store.ts';
import { children, NODE, runNode } from '../children.ts';
import { ADMIN } from '../processes.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FOOTER = 'Your Gateway to Global Perspectives.';
const { values } = parseArgs({
  options: {
    articles: { type: 'string', default: '2000' },
    /** A folder for each server's output (`<servers>-<n>.log`). */
    'log-dir': { type: 'string' },
  },
});
const ARTICLES = Number(values.articles);
if (!Number.isInteger(ARTICLES) || ARTICLES < 100 || ARTICLES > 200_000) throw new Error('--articles takes 100 to 200000');

const started = performance.now();
const say = (line: string) => console.log(`[shared-redraw ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Server = { output: () => string; url: string; pid: number; stop: () => Promise<void> };

/** CPU seconds of a process (every thread), and of the children it reaped, from /proc (Linux). */
function cpuSeconds(pid: number, reaped = false): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the command name.
    const ticks = Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
    return ticks / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of every PostgreSQL process so far (the cluster's postmaster counts the backends that ended). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let comm = '';
    try {
      comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm === 'postgres') total += cpuSeconds(Number(pid), true);
  }
  return total;
}

/** scripts/serve.ts on `core` (undefined: any), with its own data and served folders, on the bench's database. */
async function startServer(buildDir: string, env: Record<string, string>, core?: number): Promise<Server> {
  const args = [...SERVER_NODE_FLAGS, path.join(ROOT, 'scripts/serve.ts')];
  const child: ChildProcess = spawn(
    core === undefined ? NODE : 'taskset',
    core === undefined ? args : ['-c', String(core), NODE, ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: '0',
        SEED: 'none',
        SITE_URL: 'http://localhost:4321',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        FEED_FETCH_INTERVAL_MINUTES: '100000',
        BRIEFING_TIME: 'off',
        RENDER_THREADS: '1',
        OUT_DIR: buildDir,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  const { url, output, exited } = await waitForListening(child, 600_000, 20_000_000);
  return {
    url,
    output,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

/** Every HTML page of a served folder with the old build's footer (search bundles aside). */
function asDrawnByOldBuild(clientDir: string, build: string): number {
  let pages = 0;
  for (const entry of fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || !entry.name.endsWith('.html') || file.includes(`${path.sep}pagefind`)) continue;
    // The fixed pages (404, about) come with the new build itself; the worker draws the rest.
    if (!isRegenerablePath(`/${path.relative(clientDir, entry.parentPath).split(path.sep).join('/')}`)) continue;
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll(FOOTER, 'Drawn by the build before.'));
    pages++;
  }
  updateRenderStateHeader(renderStateFileFor(clientDir), (header) => ({ ...header, drawnWith: build }));
  return pages;
}

/** The fields of the server's JSON log line whose message starts with `text`. */
function logLine(output: string, text: string): Record<string, unknown> | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes(text)) continue;
    return JSON.parse(line) as Record<string, unknown>;
  }
  return undefined;
}

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-shared-redraw-'));
fs.mkdirSync(path.join(ROOT, '.out'), { recursive: true });
const buildDir = fs.mkdtempSync(path.join(ROOT, '.out', 'shared-redraw-'));
const cluster = await startCluster();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
try {
  const dataDir = path.join(workDir, 'data');
  const generated = await generateStore(dataDir, ARTICLES, say);
  say(`generated ${generated.articles} articles`);
  const imported = await runNode(
    path.join(ROOT, 'scripts/db.ts'),
    ['import', '--from', dataDir],
    { DATABASE_URL: cluster.url, DATA_DIR: dataDir },
    3_600_000,
  );
  if (imported.code !== 0) throw new Error(`db:import failed:\n${imported.output.slice(-3000)}`);
  const emptyDir = path.join(workDir, 'empty');
  fs.mkdirSync(emptyDir);
  const build = await runNode(
    path.join(ROOT, 'scripts/rebuild.ts'),
    [],
    { OUT_DIR: buildDir, DATA_DIR: emptyDir, SEED: 'none' },
    1_800_000,
  );
  if (build.code !== 0) throw new Error(`the build failed:\n${build.output.slice(-3000)}`);
  say(`built the bundle in ${round(build.ms / 1000)} s`);

  // Every page of the data drawn once by one server: the folder each round starts from.
  const drawn = path.join(workDir, 'drawn');
  fs.cpSync(path.join(buildDir, 'client'), path.join(drawn, 'client'), { recursive: true });
  {
    const server = await startServer(buildDir, {
      DATABASE_URL: cluster.url,
      DATA_DIR: path.join(workDir, 'prep-data'),
      SERVE_DIR: path.join(drawn, 'client'),
    });
    for (;;) {
      const health = (await (await fetch(`${server.url}/api/health`)).json()) as { jobs: number; reconciling: number };
      if (health.jobs === 0 && health.reconciling === 0) break;
      await sleep(200);
    }
    await server.stop();
  }

  const rounds: Array<Record<string, unknown>> = [];
  for (const count of [1, 2]) {
    const from = `bench-before-${count}`;
    let pages = 0;
    const sites = Array.from({ length: count }, (_, i) => {
      const site = path.join(workDir, `round-${count}-${i}`);
      fs.cpSync(drawn, site, { recursive: true });
      pages = asDrawnByOldBuild(path.join(site, 'client'), from);
      return site;
    });
    // The pages stored so far are the new build's: gone, as if the old build had stored its own.
    const db = createPool(cluster.url, false);
    await db.query('DELETE FROM rendered_pages');
    await db.end();
    say(`== ${count} server(s), one core each: ${pages} pages drawn by another build`);
    const t0 = performance.now();
    const pgBefore = postgresCpuSeconds();
    const servers = await Promise.all(
      sites.map((site, i) =>
        startServer(buildDir, { DATABASE_URL: cluster.url, DATA_DIR: path.join(site, 'data'), SERVE_DIR: path.join(site, 'client') }, i),
      ),
    );
    const endedAt: Array<number | undefined> = servers.map(() => undefined);
    while (endedAt.some((at) => at === undefined)) {
      servers.forEach((server, i) => {
        if (endedAt[i] === undefined && server.output().includes('every page is drawn by this build')) endedAt[i] = performance.now() - t0;
      });
      if (performance.now() - t0 > 3_600_000) throw new Error('the redraw did not end within an hour');
      await sleep(50);
    }
    const pgCpuS = round(postgresCpuSeconds() - pgBefore);
    const perServer = servers.map((server, i) => {
      const line = logLine(server.output(), 'drawn here, the rest by the other servers');
      return {
        endS: round(endedAt[i]! / 1000, 2),
        cpuS: round(cpuSeconds(server.pid)),
        sweepS: round(Number(line?.ms) / 1000, 2),
        drawnHere: line?.drawnHere,
        pages: line?.total,
        written: line?.written,
      };
    });
    const wholeS = round(Math.max(...endedAt.map(Number)) / 1000, 2);
    say(`   every page drawn on every server ${wholeS} s after the start: ${JSON.stringify(perServer)}`);
    rounds.push({ servers: count, pages, wholeS, pgCpuS, perServer });
    if (values['log-dir']) {
      fs.mkdirSync(values['log-dir'], { recursive: true });
      servers.forEach((server, i) => fs.writeFileSync(path.join(values['log-dir']!, `${count}-${i}.log`), server.output()));
    }
    await Promise.all(servers.map((server) => server.stop()));
  }
  const one = rounds[0]!.wholeS as number;
  const two = rounds[1]!.wholeS as number;
  const busiest = (r: Record<string, unknown>) => Math.max(...(r.perServer as Array<{ cpuS: number }>).map((s) => s.cpuS));
  const sweepOf = (r: Record<string, unknown>) => Math.max(...(r.perServer as Array<{ sweepS: number }>).map((s) => s.sweepS));
  const result = {
    date: new Date().toISOString().slice(0, 10),
    articles: ARTICLES,
    cores: os.cpus().length,
    note: 'each server pinned to one core (taskset), RENDER_THREADS=1; seconds from spawning the servers to the last one logging every page drawn by its build',
    rounds,
    twoOverOne: round(two / one, 2),
    /** The same from each server's join of the redraw to its end (start-up left out). */
    /** CPU seconds of the busiest server, two against one: the time on servers of their own (CPU-bound), PostgreSQL elsewhere. */
    cpuTwoOverOne: round(busiest(rounds[1]!) / busiest(rounds[0]!), 2),
    sweepTwoOverOne: round(sweepOf(rounds[1]!) / sweepOf(rounds[0]!), 2),
  };
  say(`two servers took ${result.twoOverOne} of one server's time`);
  fs.mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench/results/shared-redraw.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  for (const child of children) child.kill('SIGKILL');
  cluster.stop();
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.rmSync(buildDir, { recursive: true, force: true });
}
