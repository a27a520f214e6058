/**
 * `npm run bench [-- --articles N] [--quick] [--serving] [--search] [--lighthouse] [--runs N] [--duration S] [--keep]`: builds an
 * N-article newsroom and measures serving, publishing, votes, search, page weight and Lighthouse scores against the targets of issue 7
 * (`--serving`: only the serving comparison and page weight, on 200 articles; `--search`: only Pagefind's figures; `--lighthouse`:
 * only Lighthouse and layout shift, on a 300-article store unless --articles says otherwise, the median of 3 runs per page unless
 * --runs says otherwise);
 * prints one table and writes bench/results/latest.json. Nothing here is a timed test: it only measures.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { ApiClient } from '../tests/helpers/server.ts';
import type { Article } from '../src/schemas/article.ts';
import { generateStore } from './generate-store.ts';
import { readCollectionDocument } from '../src/store/lowdb/inspect.ts';
import type { LoadJob } from './load.ts';
import { children, NODE, runLoad, runNode } from './children.ts';
import { waitForListening } from '../scripts/server-process.ts';
import { CHROMIUM, launchBrowser, measurePageWeight, searchOnce } from './browser.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = { username: 'bench-admin', password: 'bench-password-not-secret' };
const started = performance.now();
let machine = '';

type Options = { articles: number; quick: boolean; serving: boolean; searchOnly: boolean; durationS: number; keep: boolean; lighthouseOnly: boolean; lighthouseRuns: number };

function parseOptions(argv: string[]): Options {
  const quick = argv.includes('--quick');
  // Only the serving comparison and the page weight, on a small store: the loop for tuning the static server.
  const serving = argv.includes('--serving');
  const lighthouseOnly = argv.includes('--lighthouse');
  const searchOnly = argv.includes('--search');
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const articles = Number(value('--articles') ?? (serving ? 200 : lighthouseOnly ? 300 : quick ? 1000 : 10_000));
  const durationS = Number(value('--duration') ?? (quick ? 5 : 10));
  if (!Number.isInteger(articles) || articles < 16 || articles > 100_000) throw new Error('--articles must be an integer from 16 to 100000');
  if (!(durationS >= 1 && durationS <= 60)) throw new Error('--duration must be 1-60 seconds');
  const lighthouseRuns = Number(value('--runs') ?? (lighthouseOnly ? 3 : 1));
  if (!Number.isInteger(lighthouseRuns) || lighthouseRuns < 1 || lighthouseRuns > 9) throw new Error('--runs must be 1-9');
  return { articles, quick, serving, searchOnly, durationS, keep: argv.includes('--keep'), lighthouseOnly, lighthouseRuns };
}

// ---------------------------------------------------------------------------------------------
// Figures and the table

type Verdict = 'ok' | 'MISSED' | '';
type Row = { group: string; figure: string; value: number | string; unit: string; target: string; verdict: Verdict; load: number };
const rows: Row[] = [];
const say = (line: string) => console.log(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const load1 = () => Number(os.loadavg()[0]!.toFixed(2));

/** Records one figure; `meets` decides the verdict when there is a target. */
function record(group: string, figure: string, value: number | string, unit: string, target = '', meets?: boolean): void {
  rows.push({ group, figure, value, unit, target, verdict: meets === undefined ? '' : meets ? 'ok' : 'MISSED', load: load1() });
}

function formatValue(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2);
}

function printTable(): string {
  const header = ['group', 'figure', 'value', 'unit', 'target', 'verdict', 'load'];
  const lines = rows.map((r) => [r.group, r.figure, formatValue(r.value), r.unit, r.target, r.verdict, r.load.toFixed(2)]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i === 2 || i === 6 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join('\n');
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
};

// ---------------------------------------------------------------------------------------------
// Processes: rebuild, server, nginx, load generator, Lighthouse (each its own process)



type BenchServer = { url: string; secret: string; output: () => string; searchBuilds: number[]; stop: () => Promise<void> };

async function startBenchServer(dataDir: string, outDir: string, workDir: string): Promise<BenchServer> {
  const secretFile = path.join(workDir, 'render-secret');
  const child = spawn(NODE, [path.join(ROOT, 'bench/twin-server.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      OUT_DIR: outDir,
      SERVE_DIR: path.join(outDir, 'client'),
      SEED: 'none',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      TRUST_PROXY: 'true',
      // The per-IP limits (60 votes a minute) would turn a load test into a 429 test.
      RATE_LIMIT_FACTOR: '10000',
      BENCH_SECRET_FILE: secretFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  // When each search index rebuild was reported (performance.now() of this process).
  const searchBuilds: number[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('search index rebuilt')) searchBuilds.push(performance.now());
  });
  const { url, output, exited } = await waitForListening(child, 120_000);
  return {
    url,
    secret: fs.readFileSync(secretFile, 'utf8'),
    output,
    searchBuilds,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function findNginx(): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(candidate)) return candidate;
  return undefined;
}

/**
 * nginx serving the same output folder as our server: sendfile, no logging; `auto` is one worker per
 * core (Debian's default). No compressing per request (gzip off), and the same precompressed .gz twins
 * ours serves (gzip_static; Debian's nginx has no brotli module), so both send the same bytes.
 */
async function startNginx(binary: string, clientDir: string, imagesDir: string, workDir: string, workers: number | 'auto'): Promise<{ url: string; workers: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const prefix = path.join(workDir, `nginx-${workers}`);
  fs.mkdirSync(path.join(prefix, 'logs'), { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes ${workers};
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  tcp_nopush on;
  gzip off;
  gzip_static on;
  gzip_vary on;
  etag on;
  keepalive_requests 100000;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${clientDir};
    location /images/ { alias ${imagesDir}/; }
    location / { try_files $uri $uri/index.html =404; }
  }
}
`,
  );
  const child = spawn(binary, ['-p', prefix, '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(url);
      break;
    } catch {
      if (i > 100 || child.exitCode !== null) throw new Error(`nginx did not start: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    workers: workers === 'auto' ? `${os.cpus().length} workers, one per core` : `${workers} worker`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

type Scores = { performance: number; accessibility: number; bestPractices: number; seo: number; cls: number; lcpMs: number; failing: string[] };
/** Why a score is short of its target: Lighthouse's failing audits per page, kept in the JSON. */
const notes: string[] = [];

/** Lighthouse's mobile preset (its default) in Debian's Chromium, as its own process. */
async function runLighthouse(url: string, workDir: string): Promise<Scores> {
  const out = path.join(workDir, `lighthouse-${Date.now()}.json`);
  const result = await runNode(
    path.join(ROOT, 'node_modules/lighthouse/cli/index.js'),
    [url, '--quiet', '--output=json', `--output-path=${out}`, '--only-categories=performance,accessibility,best-practices,seo', '--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage'],
    { CHROME_PATH: CHROMIUM },
    240_000,
  );
  if (result.code !== 0 || !fs.existsSync(out)) throw new Error(`lighthouse failed: ${result.output.slice(-2000)}`);
  const report = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    categories: Record<string, { score: number | null; auditRefs: Array<{ id: string; weight: number }> }>;
    audits: Record<string, { title: string; score: number | null; displayValue?: string; details?: { items?: Array<Record<string, unknown>> } }>;
  };
  const score = (name: string) => Math.round((report.categories[name]?.score ?? 0) * 100);
  const failing: string[] = [];
  for (const [name, category] of Object.entries(report.categories)) {
    for (const ref of category.auditRefs) {
      const audit = report.audits[ref.id];
      if (ref.weight > 0 && audit && audit.score !== null && audit.score < (name === 'performance' ? 0.9 : 1)) {
        // The first few items say which element or message failed (e.g. the console error's text).
        const items = (audit.details?.items ?? []).slice(0, 3).map((item) => String(item.description ?? item.url ?? (item.node as { snippet?: string } | undefined)?.snippet ?? '').slice(0, 160)).filter(Boolean);
        failing.push(`${name}: ${audit.title}${audit.displayValue ? ` (${audit.displayValue})` : ''}${items.length ? `: ${items.join(' | ')}` : ''}`);
      }
    }
  }
  const numeric = (id: string) => (report.audits[id] as { numericValue?: number } | undefined)?.numericValue ?? NaN;
  return {
    performance: score('performance'),
    accessibility: score('accessibility'),
    bestPractices: score('best-practices'),
    seo: score('seo'),
    cls: numeric('cumulative-layout-shift'),
    lcpMs: numeric('largest-contentful-paint'),
    failing,
  };
}

function folderBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      bytes += fs.statSync(path.join(entry.parentPath, entry.name)).size;
      files++;
    }
  }
  return { bytes, files };
}

async function waitUntil(timeoutMs: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

const pageText = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
};

// ---------------------------------------------------------------------------------------------
// The phases

async function measureServing(server: BenchServer, slug: string, options: Options, clientDir: string, imagesDir: string, workDir: string): Promise<void> {
  const page = `/article/${slug}`;
  const twin = `/render-twin/article/${slug}`;
  const headers = { 'x-meridian-render': server.secret };
  const staticPage = await pageText(`${server.url}${page}`);
  const twinResponse = await fetch(`${server.url}${twin}`, { headers });
  const twinText = await twinResponse.text();
  if (staticPage.status !== 200 || twinResponse.status !== 200 || !twinText.includes('</html>')) throw new Error(`cannot serve ${page}: static ${staticPage.status}, twin ${twinResponse.status}`);
  say(`serving ${page} (${staticPage.text.length.toLocaleString('en-US')} bytes static, ${twinText.length.toLocaleString('en-US')} bytes from the twin)`);
  const job = (url: string, extra: Partial<LoadJob> = {}): LoadJob => ({ url, connections: 50, durationS: options.durationS, ...extra });
  const warm = (j: LoadJob) => runLoad({ ...j, durationS: 2 });

  await warm(job(`${server.url}${page}`));
  const a = await runLoad(job(`${server.url}${page}`));
  record('serving', '(a) static article page, our server', a.rps, 'req/s');
  record('serving', '(a) latency p50 / p99', `${a.p50} / ${a.p99}`, 'ms');
  await warm(job(`${server.url}${twin}`, { headers }));
  const b = await runLoad(job(`${server.url}${twin}`, { headers }));
  record('serving', '(b) same page rendered per request (twin)', b.rps, 'req/s');
  record('serving', '(b) latency p50 / p99', `${b.p50} / ${b.p99}`, 'ms');
  const ab = a.rps / b.rps;
  record('serving', 'ratio a/b', Number(ab.toFixed(2)), 'x', '>= 6', ab >= 6);
  const failures = a.non2xx + a.errors + b.non2xx + b.errors;
  if (failures) say(`WARNING: ${failures} failed or non-2xx answers during (a)/(b)`);

  const nginx = findNginx();
  if (!nginx) {
    record('serving', '(c) nginx, same file', 'skipped', '', 'nginx not installed: apt-get install -y nginx');
    return;
  }
  // One worker per core is how nginx ships; one worker is the like-for-like figure beside our one Node process.
  const gzipHeaders = { 'accept-encoding': 'gzip' };
  await warm(job(`${server.url}${page}`, { headers: gzipHeaders }));
  const agz = await runLoad(job(`${server.url}${page}`, { headers: gzipHeaders }));
  record('serving', '(a-gz) static article page, our server, Accept-Encoding: gzip (its .gz twin)', agz.rps, 'req/s');
  for (const workers of ['auto', 1] as const) {
    const proxy = await startNginx(nginx, clientDir, imagesDir, workDir, workers);
    try {
      const check = await pageText(`${proxy.url}${page}`);
      if (check.status !== 200 || check.text.length !== staticPage.text.length) throw new Error(`nginx answers ${check.status} with ${check.text.length} bytes for ${page}`);
      await warm(job(`${proxy.url}${page}`));
      const c = await runLoad(job(`${proxy.url}${page}`));
      const tag = workers === 'auto' ? '(c)' : '(c1)';
      record('serving', `${tag} nginx, same file (${proxy.workers})`, c.rps, 'req/s');
      record('serving', `${tag} latency p50 / p99`, `${c.p50} / ${c.p99}`, 'ms');
      const ac = a.rps / c.rps;
      if (workers === 'auto') record('serving', 'ratio a/c', Number(ac.toFixed(2)), 'x', '>= 0.5', ac >= 0.5);
      else record('serving', 'ratio a/c1 (nginx with one worker, for reference)', Number(ac.toFixed(2)), 'x');
      if (workers === 'auto') {
        const cgz = await runLoad(job(`${proxy.url}${page}`, { headers: gzipHeaders }));
        record('serving', '(c-gz) nginx, same .gz twin (gzip_static)', cgz.rps, 'req/s');
        record('serving', 'ratio a-gz/c-gz', Number((agz.rps / cgz.rps).toFixed(2)), 'x');
      }
    } finally {
      await proxy.stop();
    }
  }
}

async function measurePublishing(server: BenchServer, admin: ApiClient, runs: number, buildMs: number, heroImage: string | undefined): Promise<void> {
  const times: number[] = [];
  const apiTimes: number[] = [];
  const body = `<p>${'The council met again on Thursday to weigh the proposal and hear from residents. '.repeat(60)}</p>`;
  let failed = 0;
  for (let round = 0; round < runs / 2; round++) {
    const section = (['world', 'business', 'politics', 'tech'] as const)[round % 4];
    const title = `Bench live story ${round} ${Date.now()}`;
    const t0 = performance.now();
    const created = await admin.post('/api/articles', { title, bodyHtml: body, section, status: 'published', tags: ['bench'], heroImage });
    if (created.status !== 201) throw new Error(`publish failed: ${created.status} ${await created.text()}`);
    apiTimes.push(performance.now() - t0);
    const article = (await created.json()) as Article;
    const live = async (expect: string) =>
      waitUntil(30_000, async () => {
        const [page, listing] = await Promise.all([pageText(`${server.url}/article/${article.slug}`), pageText(`${server.url}/section/${section}`)]);
        return page.status === 200 && page.text.includes(expect) && listing.text.includes(expect);
      });
    if (await live(title)) times.push(performance.now() - t0);
    else failed++;

    const newTitle = `${title} updated`;
    const t1 = performance.now();
    const updated = await admin.put(`/api/articles/${article.id}`, { title: newTitle });
    if (updated.status !== 200) throw new Error(`update failed: ${updated.status}`);
    apiTimes.push(performance.now() - t1);
    if (await live(newTitle)) times.push(performance.now() - t1);
    else failed++;
  }
  const p50 = quantile(times, 0.5);
  const p95 = quantile(times, 0.95);
  record('publish', `publish/update -> article + section page live, p50 (${times.length} runs)`, Math.round(p50), 'ms');
  record('publish', 'publish/update -> live, p95', Math.round(p95), 'ms', '<= 1,000', p95 <= 1000 && failed === 0);
  record('publish', 'API call alone, p50 / p95', `${Math.round(quantile(apiTimes, 0.5))} / ${Math.round(quantile(apiTimes, 0.95))}`, 'ms');
  const share = (p95 / buildMs) * 100;
  record('publish', 'live p95 as a share of the full build', Number(share.toFixed(2)), '%', '<= 1%', share <= 1);
  if (failed) record('publish', 'runs not live within 30 s', failed, 'runs', '0', false);
}

async function measureVotes(server: BenchServer, admin: ApiClient, options: Options): Promise<{ check: (dataDir: string) => void }> {
  const listed = (await (await admin.get('/api/articles?pageSize=100&status=published')).json()) as Article[];
  const ids = listed.map((a) => a.id);
  const before = new Map<string, { likes: number; dislikes: number }>();
  for (const id of ids) before.set(id, (await (await fetch(`${server.url}/api/articles/${id}/vote`)).json()) as { likes: number; dislikes: number });
  const result = await runLoad({ url: server.url, connections: 50, durationS: options.durationS, votes: { articleIds: ids, origin: server.url } });
  const acknowledged = result.acknowledged ?? {};
  const inFlight = result.inFlight ?? {};
  const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
  record('votes', 'like/dislike, each from a new visitor cookie', result.rps, 'votes/s', '>= 2,000', result.rps >= 2000);
  record('votes', 'latency p99', result.p99, 'ms', '<= 50', result.p99 <= 50);
  record('votes', 'acknowledged (200) / refused or failed', `${total(acknowledged)} / ${result.non2xx + result.errors + result.timeouts}`, 'votes');
  /**
   * Every acknowledged vote must be counted (lost = 0), and the only extra votes allowed are the
   * requests still in flight when the load generator stopped (sent, never read): the server may
   * have stored them. Anything beyond that is a miscount.
   */
  const compare = (read: (id: string) => { likes: number; dislikes: number }) => {
    let lost = 0;
    let extra = 0;
    let miscounted = 0;
    for (const id of ids) {
      const now = read(id);
      for (const kind of ['like', 'dislike'] as const) {
        const key = `${id}:${kind}`;
        const added = (kind === 'like' ? now.likes - before.get(id)!.likes : now.dislikes - before.get(id)!.dislikes) - (acknowledged[key] ?? 0);
        if (added < 0) lost -= added;
        else if (added <= (inFlight[key] ?? 0)) extra += added;
        else miscounted += added;
      }
    }
    return { lost, extra, miscounted };
  };
  const served = new Map<string, { likes: number; dislikes: number }>();
  for (const id of ids) served.set(id, (await (await fetch(`${server.url}/api/articles/${id}/vote`)).json()) as { likes: number; dislikes: number });
  const api = compare((id) => served.get(id)!);
  record('votes', `API tallies: lost / miscounted (+${api.extra} of ${total(inFlight)} in flight at stop)`, `${api.lost} / ${api.miscounted}`, 'votes', '0 / 0', api.lost === 0 && api.miscounted === 0);
  // The durable check runs once the server has stopped: the votes file must hold every acknowledged vote.
  return {
    check: (dataDir: string) => {
      const file = readCollectionDocument(dataDir, 'votes') as { tallies: Record<string, { likes: number; dislikes: number }> };
      const stored = compare((id) => file.tallies[id] ?? { likes: 0, dislikes: 0 });
      record('votes', `vote files after shutdown: lost / miscounted (+${stored.extra} in flight)`, `${stored.lost} / ${stored.miscounted}`, 'votes', '0 / 0', stored.lost === 0 && stored.miscounted === 0);
    },
  };
}

const QUERIES = ['election', 'interest rates', 'climate', 'festival', 'Lisbon', 'championship final', 'encryption', 'housing market', 'Amara Okafor', 'refugees border', 'budget reform', 'satellite'];

async function measureSearchApi(server: BenchServer, rounds: number): Promise<void> {
  const times: number[] = [];
  for (const q of QUERIES) await fetch(`${server.url}/api/search?q=${encodeURIComponent(q)}&pageSize=12`).then((r) => r.text());
  for (let round = 0; round < rounds; round++) {
    for (const q of QUERIES) {
      const t0 = performance.now();
      const response = await fetch(`${server.url}/api/search?q=${encodeURIComponent(q)}&pageSize=12`);
      await response.text();
      if (response.status !== 200) throw new Error(`/api/search answered ${response.status}`);
      times.push(performance.now() - t0);
    }
  }
  record('search', `/api/search p50 (${QUERIES.length} queries x ${rounds})`, Number(quantile(times, 0.5).toFixed(1)), 'ms');
  const p95 = quantile(times, 0.95);
  record('search', '/api/search p95', Number(p95.toFixed(1)), 'ms', '<= 30', p95 <= 30);
}

async function measurePagefind(server: BenchServer, admin: ApiClient, browser: Browser, clientDir: string, rebuildOutput: string): Promise<void> {
  const index = folderBytes(path.join(clientDir, 'pagefind'));
  record('search', 'Pagefind index on disk', Number((index.bytes / 1048576).toFixed(1)), 'MB', `${index.files} files`);
  const periods = (JSON.parse(fs.readFileSync(path.join(clientDir, 'pagefind', 'periods.json'), 'utf8')) as { periods: string[] }).periods;
  const first = await searchOnce(browser, server.url, 'election');
  record(
    'search',
    `Pagefind first query in Chromium ('election', ${first.results} results shown; page and web worker requests)`,
    Math.round(first.pagefindBytes / 1024),
    'KB',
    '<= 300',
    first.found && first.pagefindBytes <= 300 * 1024,
  );
  notes.push(`Pagefind first query: ${first.pagefindRequests} requests, ${first.bundles} of ${periods.length} bundles merged; a CDP session on the page alone saw ${Math.round(first.pageOnlyBytes / 1024)} KB`);
  // A page past what the recent bundles hold: the reader asks for older articles, every bundle is merged.
  const archive = await searchOnce(browser, server.url, 'election', undefined, 20_000, 60);
  record('search', `Pagefind query for page 60 (past the recent bundles: the older ones merged too; ${periods.length} bundles)`, Math.round(archive.pagefindBytes / 1024), 'KB', `${archive.pagefindRequests} requests, ${archive.bundles} bundles`);
  for (const line of rebuildOutput.matchAll(/search bundle\s+(\S+): (\d+) pages in ([\d.]+) s/g)) {
    record('search', `index one bundle in the full rebuild: ${line[1]} (${line[2]} pages)`, Number(line[3]), 's', `${(Number(line[3]) / Number(line[2]) * 1000).toFixed(1)} ms a page`);
  }

  // A word no generated article contains, so "found" means the new page is in the index.
  const word = `zephyrine${Date.now().toString(36)}`;
  const t0 = performance.now();
  const created = await admin.post('/api/articles', { title: `Bench findable ${word}`, bodyHtml: `<p>The ${word} story.</p>`, section: 'world', status: 'published' });
  const article = (await created.json()) as Article;
  const found = await waitUntil(240_000, async () => (await searchOnce(browser, server.url, word, `/article/${article.slug}`, 3000)).found);
  const ms = performance.now() - t0;
  const rebuilt = [...server.output().matchAll(/search index rebuilt: (\d+) pages in (\d+) ms/g)].at(-1);
  const firstBuild = server.searchBuilds.find((at) => at > t0);
  const detail = [rebuilt ? `last index rebuild took ${(Number(rebuilt[2]) / 1000).toFixed(1)} s` : '', firstBuild ? `first rebuild after publish reported at ${((firstBuild - t0) / 1000).toFixed(1)} s` : ''].filter(Boolean).join('; ');
  record('search', 'publish -> findable through Pagefind', found ? Number((ms / 1000).toFixed(1)) : 'not within 240 s', 's', detail);
}

async function measureWeight(server: BenchServer, browser: Browser, slug: string): Promise<void> {
  say('page weight in Chromium...');
  for (const [name, url] of [['article page', `/article/${slug}`], ['section page', '/section/world']] as const) {
    const weight = await measurePageWeight(browser, `${server.url}${url}`);
    const js = weight.jsGzipBytes / 1024;
    const kb = (n: number) => Number((n / 1024).toFixed(1));
    record('weight', `${name}: JavaScript gzip (${weight.jsFiles} files, ${Math.round(weight.jsRawBytes / 1024)} KB raw)`, Number(js.toFixed(1)), 'KB', name === 'article page' ? '<= 90' : '', name === 'article page' ? js <= 90 : undefined);
    record('weight', `${name}: HTML + JS + CSS transferred (brotli; ${kb(weight.documentBytes)} + ${kb(weight.scriptBytes)} + ${kb(weight.styleBytes)} KB)`, kb(weight.documentBytes + weight.scriptBytes + weight.styleBytes), 'KB');
    record('weight', `${name}: total transfer (${weight.requests} requests, images included)`, kb(weight.totalBytes), 'KB');
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const outDir = path.join(ROOT, '.out', 'bench');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-'));
  const dataDir = path.join(workDir, 'data');
  machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  say(`${options.articles} articles, ${options.durationS} s per load run${options.quick ? ' (quick)' : ''}; machine: ${machine}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  say(`data in ${dataDir}, build in ${path.relative(ROOT, outDir)}`);
  let server: BenchServer | undefined;
  let votes: { check: (dataDir: string) => void } | undefined;
  let browser: Browser | undefined;
  try {
    // 1. Data
    const store = await generateStore(dataDir, options.articles, say);
    record('data', `generate ${options.articles} articles (avg ${store.words} words, ${store.images} hero images)`, Number((store.ms / 1000).toFixed(1)), 's');
    record('data', 'article files (one per article)', Number((store.bytes / 1048576).toFixed(1)), 'MB');

    // 2. Full build (npm run rebuild: astro build + Pagefind), into the bench's own folder
    say('full rebuild (astro build + Pagefind)...');
    fs.rmSync(outDir, { recursive: true, force: true });
    const rebuild = await runNode(path.join(ROOT, 'scripts/rebuild.ts'), [], { OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none' }, 900_000);
    if (rebuild.code !== 0) throw new Error(`rebuild failed:\n${rebuild.output.slice(-3000)}`);
    const files = Number(/files prerendered\s+(\d+)/.exec(rebuild.output)?.[1] ?? NaN);
    const astroMs = Number(/astro build ([\d.]+) s/.exec(rebuild.output)?.[1] ?? NaN) * 1000;
    const searchMs = Number(/search index\s+\d+ pages \(([\d.]+) s\)/.exec(rebuild.output)?.[1] ?? NaN) * 1000;
    record('build', `full npm run rebuild (${files} files, with Pagefind)`, Number((rebuild.ms / 1000).toFixed(1)), 's');
    record('build', 'astro build alone (npm run build)', Number((astroMs / 1000).toFixed(1)), 's');
    record('build', 'Pagefind index in the rebuild', Number((searchMs / 1000).toFixed(1)), 's');
    const perPage = astroMs / files;
    record('build', 'astro build per page', Number(perPage.toFixed(2)), 'ms', '<= 2', perPage <= 2);
    record('build', 'full rebuild per page', Number((rebuild.ms / files).toFixed(2)), 'ms');

    // 3. Server
    server = await startBenchServer(dataDir, outDir, workDir);
    say(`server on ${server.url}`);
    const admin = new ApiClient(server.url);
    await admin.login(ADMIN.username, ADMIN.password);
    const [sample] = (await (await admin.get('/api/articles?section=world&pageSize=1&status=published')).json()) as Article[];
    if (!sample) throw new Error('no published article to measure');

    if (options.searchOnly) {
      browser = await launchBrowser();
      await measurePagefind(server, admin, browser, path.join(outDir, 'client'), rebuild.output);
      await browser.close();
      browser = undefined;
      await server.stop();
      server = undefined;
      return finish(options);
    }

    // --lighthouse skips the load runs, search and votes: only the browser figures below.
    if (!options.lighthouseOnly) {
      say('reader serving (a) static, (b) per-request render, (c) nginx...');
      await measureServing(server, sample.slug, options, path.join(outDir, 'client'), path.join(dataDir, 'images'), workDir);

      if (options.serving) {
        browser = await launchBrowser();
        await measureWeight(server, browser, sample.slug);
        await browser.close();
        browser = undefined;
        await server.stop();
        server = undefined;
        return finish(options);
      }

      say('publish -> live...');
      await measurePublishing(server, admin, options.quick ? 20 : 24, rebuild.ms, sample.heroImage);

      say('search...');
      await measureSearchApi(server, options.quick ? 5 : 10);
      browser = await launchBrowser();
      await measurePagefind(server, admin, browser, path.join(outDir, 'client'), rebuild.output);

      say('votes...');
      votes = await measureVotes(server, admin, options);

      await measureWeight(server, browser, sample.slug);
      await browser.close();
      browser = undefined;
    }

    say('Lighthouse (mobile)...');
    for (const [name, url] of [['article page', `/article/${sample.slug}`], ['section page', '/section/world'], ['search page', '/search']] as const) {
      try {
        // Lighthouse's own advice: the median of several runs (by performance score), a single run is noisy.
        const runs: Scores[] = [];
        for (let run = 0; run < options.lighthouseRuns; run++) runs.push(await runLighthouseRetrying(`${server.url}${url}`, workDir));
        const scores = [...runs].sort((a, b) => a.performance - b.performance)[Math.floor(runs.length / 2)]!;
        if (runs.length > 1) record('lighthouse', `${name}: performance of each run`, runs.map((r) => r.performance).join(', '), '/100');
        record('lighthouse', `${name}: performance`, scores.performance, '/100', '>= 95', scores.performance >= 95);
        record('lighthouse', `${name}: accessibility`, scores.accessibility, '/100', '100', scores.accessibility === 100);
        record('lighthouse', `${name}: best practices`, scores.bestPractices, '/100', '100', scores.bestPractices === 100);
        record('lighthouse', `${name}: SEO`, scores.seo, '/100', name === 'search page' ? '(noindex on purpose)' : '100', name === 'search page' ? undefined : scores.seo === 100);
        record('lighthouse', `${name}: CLS`, Number(scores.cls.toFixed(3)), '', '<= 0.1', scores.cls <= 0.1);
        record('lighthouse', `${name}: LCP (simulated mobile)`, Math.round(scores.lcpMs), 'ms');
        for (const failing of scores.failing) notes.push(`lighthouse ${name}: ${failing}`);
      } catch (error) {
        record('lighthouse', `${name}`, 'failed', '', (error as Error).message.split('\n')[0]!.slice(0, 80), false);
      }
    }

    await server.stop();
    server = undefined;
    votes?.check(dataDir);
  } finally {
    await browser?.close().catch(() => {});
    await server?.stop();
    for (const child of children) child.kill('SIGKILL');
    // The 10,000-article build is half a gigabyte: kept only when asked (--keep), with the data.
    if (!options.keep) {
      fs.rmSync(workDir, { recursive: true, force: true });
      fs.rmSync(outDir, { recursive: true, force: true });
    } else say(`kept: data in ${dataDir}, build in ${outDir}`);
  }

  finish(options);
}

/**
 * Lighthouse's trace recording sometimes fails on a loaded machine ("Something went wrong with recording"): a run is retried twice before
 * the page counts as failed.
 */
async function runLighthouseRetrying(url: string, workDir: string): Promise<Scores> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runLighthouse(url, workDir);
    } catch (error) {
      if (attempt >= 3) throw error;
      notes.push(`lighthouse ${url}: attempt ${attempt} failed (${(error as Error).message.split('\n')[0]!.slice(0, 80)}), retried`);
    }
  }
}

function finish(options: Options): void {
  const missed = rows.filter((r) => r.verdict === 'MISSED');
  const table = printTable();
  console.log(`\nMeridian News bench: ${options.articles} articles${options.serving ? ' (--serving: serving and page weight only)' : options.searchOnly ? ' (--search: Pagefind only)' : ''}; ${machine}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at the end; ${((performance.now() - started) / 1000).toFixed(0)} s in all\n`);
  console.log(table);
  if (notes.length) console.log(`\nNotes:\n  ${notes.join('\n  ')}`);
  console.log(missed.length ? `\nMISSED ${missed.length} target(s): ${missed.map((r) => `${r.group}: ${r.figure}`).join('; ')}` : '\nEvery target met.');
  const results = path.join(ROOT, `bench/results/${options.serving ? 'serving' : options.searchOnly ? `search-${options.articles}` : options.lighthouseOnly ? 'lighthouse' : 'latest'}.json`);
  fs.mkdirSync(path.dirname(results), { recursive: true });
  fs.writeFileSync(
    results,
    JSON.stringify({ takenAt: new Date().toISOString(), machine, options, seconds: Math.round((performance.now() - started) / 1000), rows, notes, missed: missed.length }, null, 2),
  );
  console.log(`\nWritten to ${path.relative(ROOT, results)}`);
}

main().catch((error: unknown) => {
  console.error(`[bench] FAILED: ${(error as Error).stack ?? String(error)}`);
  if (rows.length) console.error(`\nFigures so far:\n${printTable()}`);
  process.exit(1);
});

