/**
 * `npm run bench:servers [-- --articles N] [--votes N] [--duration S] [--keep] [--log-dir DIR]`: votes/s, reader req/s
 * and p99 on an article page, and publish -> live p95 at N articles with lowdb on one server, PostgreSQL on one server
 * and PostgreSQL on two servers behind nginx (deploy/nginx-multi.conf); prints a table and writes bench/results/servers.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../tests/helpers/server.ts';
import { startCluster } from '../tests/helpers/postgres.ts';
import type { Article } from '../src/schemas/article.ts';
import { openStore } from '../src/store/index.ts';
import { manifestFileFor, writeRenderManifest } from '../src/server/publishing/manifest.ts';
import { generateStore, generateVotes } from './generate-store.ts';
import { children, NODE, runLoad, runNode } from './children.ts';
import { SERVER_NODE_FLAGS, waitForListening } from '../scripts/server-process.ts';
import { NGINX, startBalancer } from '../tests/helpers/nginx.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = { username: 'bench-admin', password: 'bench-password-not-secret' };
const started = performance.now();
const say = (line: string) => console.log(`[servers ${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
};
const load1 = () => Number(os.loadavg()[0]!.toFixed(2));

const { values } = parseArgs({
  options: {
    articles: { type: 'string', default: '100000' },
    votes: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    publishes: { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
    /** A folder for each server's output, every line stamped with the bench's clock (as its own lines), publishes marked. */
    'log-dir': { type: 'string' },
  },
});
const ARTICLES = Number(values.articles);
const VOTES = Number(values.votes);
const DURATION_S = Number(values.duration);
const PUBLISHES = Number(values.publishes);
if (!Number.isInteger(ARTICLES) || ARTICLES < 100 || ARTICLES > 200_000) throw new Error('--articles takes 100 to 200000');
if (!Number.isInteger(VOTES) || VOTES < 0) throw new Error('--votes must be a whole number');
if (!(DURATION_S >= 2 && DURATION_S <= 60)) throw new Error('--duration must be 2-60 seconds');
if (!Number.isInteger(PUBLISHES) || PUBLISHES < 2) throw new Error('--publishes must be 2 or more');

type Server = { url: string; startS: number; output: () => string; mark: (line: string) => void; stop: () => Promise<void> };

const benchS = () => ((performance.now() - started) / 1000).toFixed(3);

/** scripts/serve.ts in a process of its own, as `npm start` runs it (with `--log-dir`, its output goes to `<name>.log`). */
async function startServer(name: string, buildDir: string, env: Record<string, string>): Promise<Server> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(NODE, ['--max-old-space-size=8192', ...SERVER_NODE_FLAGS, path.join(ROOT, 'scripts/serve.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      SEED: 'none',
      // Production mode (scripts/serve.ts run directly) refuses to start without it; the build's default.
      SITE_URL: 'http://localhost:4321',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      TRUST_PROXY: 'true',
      RATE_LIMIT_FACTOR: '10000',
      FEED_FETCH_INTERVAL_MINUTES: '100000',
      BRIEFING_TIME: 'off',
      OUT_DIR: buildDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const logFile = values['log-dir'] ? path.join(path.resolve(values['log-dir']), `${name}.log`) : undefined;
  const stamped: string[] = [];
  if (logFile) {
    let partial = '';
    const onData = (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) stamped.push(`[${benchS()} s] ${line}`);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  }
  const { url, output, exited } = await waitForListening(child, 600_000, 5_000_000);
  return {
    url,
    startS: round((performance.now() - t0) / 1000, 2),
    output,
    mark: (line) => {
      if (logFile) stamped.push(`[${benchS()} s] [bench] ${line}`);
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
      if (logFile) {
        fs.mkdirSync(path.dirname(logFile), { recursive: true });
        fs.writeFileSync(logFile, `${stamped.join('\n')}\n`);
      }
    },
  };
}

async function waitUntil(timeoutMs: number, check: () => Promise<boolean>, everyMs = 10): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

async function waitForIdleQueue(url: string, timeoutMs = 600_000): Promise<void> {
  const ok = await waitUntil(timeoutMs, async () => ((await (await fetch(`${url}/api/health`)).json()) as { jobs: number }).jobs === 0, 50);
  if (!ok) throw new Error(`the regeneration queue of ${url} did not drain`);
}

/**
 * A served folder of its own for one server: a copy of the small build's client folder, with a render manifest saying it
 * is current for `store` (else the server would re-render every one of the N articles in the background while measured).
 */
function siteFor(workDir: string, name: string, buildDir: string, store: { id: string; version: number }): string {
  const clientDir = path.join(workDir, `site-${name}`, 'client');
  fs.cpSync(path.join(buildDir, 'client'), clientDir, { recursive: true });
  writeRenderManifest(manifestFileFor(clientDir), {
    storeId: store.id,
    version: store.version,
    renderedAt: new Date().toISOString(),
    by: 'build',
  });
  return clientDir;
}

async function storeState(dataDir: string, databaseUrl: string | undefined): Promise<{ id: string; version: number }> {
  const store = await openStore(dataDir, 'read', { databaseUrl });
  try {
    return { id: store.id, version: await store.articles.version() };
  } finally {
    await store.close();
  }
}

const BODY = `<p>${'The council met again on Thursday to weigh the proposal and hear from residents who had waited for hours. '.repeat(60)}</p>`;

type Setup = {
  setup: string;
  servers: number;
  store: 'lowdb' | 'postgresql';
  startS: number;
  votesPerS: number;
  voteP99Ms: number;
  voteNon2xx: number;
  readerReqPerS: number;
  readerP99Ms: number;
  readerNon2xx: number;
  publishLiveP50Ms: number;
  publishLiveP95Ms: number;
  load1: number;
};

/** The three figures through `front` (a server, or nginx before two), with pages checked live on every server in `servers`. */
async function measure(name: string, store: Setup['store'], front: string, servers: Server[], voteIds: string[]): Promise<Setup> {
  const admin = new ApiClient(front);
  await admin.login(ADMIN.username, ADMIN.password);
  for (const server of servers) await waitForIdleQueue(server.url);

  // Publish -> the article page and its section listing live on every server.
  const liveMs: number[] = [];
  const slugs: string[] = [];
  for (let round = 0; round < PUBLISHES; round++) {
    const section = (['world', 'business', 'politics', 'tech'] as const)[round % 4];
    const title = `Servers live story ${round} ${Date.now()}`;
    const p0 = performance.now();
    for (const server of servers) server.mark(`publish ${round} posted`);
    const created = await admin.post('/api/articles', { title, bodyHtml: BODY, section, status: 'published', tags: ['bench'] });
    if (created.status !== 201) throw new Error(`publish failed: ${created.status} ${await created.text()}`);
    const article = (await created.json()) as Article;
    slugs.push(article.slug);
    const live = await waitUntil(120_000, async () => {
      for (const server of servers) {
        const [page, listing] = await Promise.all([
          fetch(`${server.url}/article/${article.slug}`).then((r) => r.text()),
          fetch(`${server.url}/section/${section}`).then((r) => r.text()),
        ]);
        if (!page.includes(title) || !listing.includes(title)) return false;
      }
      return true;
    });
    if (!live) throw new Error(`${name}: ${article.slug} not live on every server within 120 s`);
    liveMs.push(performance.now() - p0);
    for (const server of servers) server.mark(`publish ${round} live on every server after ${liveMs.at(-1)!.toFixed(0)} ms`);
    for (const server of servers) await waitForIdleQueue(server.url);
  }
  say(`  publish -> live p95 ${quantile(liveMs, 0.95).toFixed(0)} ms (${liveMs.map((ms) => ms.toFixed(0)).join(', ')})`);

  // Readers on one article page (one published above: the small build has no page for the generated articles).
  const readerUrl = `${front}/article/${slugs[0]}`;
  await runLoad({ url: readerUrl, connections: 10, durationS: 2 });
  const readers = await runLoad({ url: readerUrl, connections: 10, durationS: DURATION_S });
  say(`  readers: ${Math.round(readers.rps)} req/s, p99 ${readers.p99} ms (${readers.non2xx} non-2xx, ${readers.errors} errors)`);

  // Votes, each from a new visitor, on the most-voted generated articles.
  const votes = await runLoad({ url: front, connections: 10, durationS: DURATION_S, votes: { articleIds: voteIds, origin: front } });
  say(`  votes: ${Math.round(votes.rps)}/s, p99 ${votes.p99} ms (${votes.non2xx} non-2xx, ${votes.errors} errors)`);
  for (const server of servers) await waitForIdleQueue(server.url);
  // The served copies carry a current manifest: a server that still re-rendered the whole archive would skew every figure.
  const reconciled = servers.filter((s) => s.output().includes('[publish] reconciling'));
  if (reconciled.length) say(`  WARNING: ${reconciled.length} server(s) reconciled all pages during the run`);

  return {
    setup: name,
    servers: servers.length,
    store,
    startS: Math.max(...servers.map((s) => s.startS)),
    votesPerS: Math.round(votes.rps),
    voteP99Ms: votes.p99,
    voteNon2xx: votes.non2xx + votes.errors,
    readerReqPerS: Math.round(readers.rps),
    readerP99Ms: readers.p99,
    readerNon2xx: readers.non2xx + readers.errors,
    publishLiveP50Ms: Math.round(quantile(liveMs, 0.5)),
    publishLiveP95Ms: Math.round(quantile(liveMs, 0.95)),
    load1: load1(),
  };
}

function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join('\n');
}

async function main(): Promise<void> {
  if (!fs.existsSync(NGINX)) throw new Error(`bench:servers needs nginx at ${NGINX} (Debian: apt-get install -y nginx)`);
  const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  const loadBefore = os.loadavg().map((l) => round(l, 2));
  say(`${ARTICLES} articles, ${VOTES} stored votes, ${DURATION_S} s per load run; ${machine}; load ${loadBefore.join(' ')}`);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-servers-'));
  fs.mkdirSync(path.join(ROOT, '.out'), { recursive: true });
  const buildDir = fs.mkdtempSync(path.join(ROOT, '.out', 'servers-build-'));
  const detail: Record<string, number | string> = {};
  const results: Setup[] = [];
  const cluster = await startCluster();
  try {
    const dataDir = path.join(workDir, 'data');
    const generated = await generateStore(dataDir, ARTICLES, say);
    await generateVotes(dataDir, generated.ids, VOTES);
    detail.generateS = round(generated.ms / 1000);
    say(`generated ${ARTICLES} articles and ${VOTES} votes in ${detail.generateS} s`);

    // One small build (an empty store) gives the shell every server starts from; the pages measured are rendered by the servers.
    const emptyDir = path.join(workDir, 'empty');
    fs.mkdirSync(emptyDir);
    const build = await runNode(
      path.join(ROOT, 'scripts/rebuild.ts'),
      [],
      { OUT_DIR: buildDir, DATA_DIR: emptyDir, SEED: 'none' },
      1_800_000,
    );
    if (build.code !== 0) throw new Error(`the small build failed:\n${build.output.slice(-3000)}`);
    detail.smallBuildS = round(build.ms / 1000);
    say(`small build (empty store) in ${detail.smallBuildS} s`);

    const imported = await runNode(
      path.join(ROOT, 'scripts/db.ts'),
      ['import', '--from', dataDir],
      { DATABASE_URL: cluster.url, DATA_DIR: dataDir },
      3_600_000,
    );
    if (imported.code !== 0) throw new Error(`db:import failed:\n${imported.output.slice(-3000)}`);
    detail.importS = round(imported.ms / 1000);
    say(`db:import in ${detail.importS} s`);
    fs.mkdirSync(path.join(workDir, 'pg-probe'));
    const pgState = await storeState(path.join(workDir, 'pg-probe'), cluster.url);
    const voteIds = generated.ids.slice(0, 50);

    // 1. lowdb, one server (DATA_DIR is the generated store; it runs first so PostgreSQL holds the same data as it started with).
    say('== lowdb, 1 server');
    {
      const state = await storeState(dataDir, undefined);
      const server = await startServer('lowdb', buildDir, { DATA_DIR: dataDir, SERVE_DIR: siteFor(workDir, 'lowdb', buildDir, state) });
      try {
        say(`  listening after ${server.startS} s`);
        results.push(await measure('lowdb, 1 server', 'lowdb', server.url, [server], voteIds));
      } finally {
        await server.stop();
      }
    }

    // 2. PostgreSQL, one server.
    say('== PostgreSQL, 1 server');
    {
      const server = await startServer('pg1', buildDir, {
        DATABASE_URL: cluster.url,
        DATA_DIR: fs.mkdtempSync(path.join(workDir, 'pg1-')),
        SERVE_DIR: siteFor(workDir, 'pg1', buildDir, pgState),
      });
      try {
        say(`  listening after ${server.startS} s`);
        results.push(await measure('PostgreSQL, 1 server', 'postgresql', server.url, [server], voteIds));
      } finally {
        await server.stop();
      }
    }

    // 3. PostgreSQL, two servers behind nginx (the same database: it holds the first run's publishes and votes too).
    say('== PostgreSQL, 2 servers behind nginx');
    {
      const state = await storeState(path.join(workDir, 'pg-probe'), cluster.url);
      const servers: Server[] = [];
      try {
        for (const name of ['pg2a', 'pg2b'])
          servers.push(
            await startServer(name, buildDir, {
              DATABASE_URL: cluster.url,
              DATA_DIR: fs.mkdtempSync(path.join(workDir, `${name}-`)),
              SERVE_DIR: siteFor(workDir, name, buildDir, state),
            }),
          );
        say(`  listening after ${servers.map((s) => s.startS).join(' s, ')} s`);
        const nginx = await startBalancer([Number(new URL(servers[0]!.url).port), Number(new URL(servers[1]!.url).port)]);
        try {
          results.push(await measure('PostgreSQL, 2 servers + nginx', 'postgresql', nginx.url, servers, voteIds));
        } finally {
          await nginx.stop();
        }
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    cluster.stop();
    if (values.keep) say(`kept ${workDir} and ${buildDir}`);
    else {
      fs.rmSync(workDir, { recursive: true, force: true });
      fs.rmSync(buildDir, { recursive: true, force: true });
    }
  }

  const loadAfter = os.loadavg().map((l) => round(l, 2));
  console.log(
    `\nMeridian News bench:servers; ${ARTICLES.toLocaleString('en-US')} articles; ${machine}; load before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}\n`,
  );
  const keys = [
    'startS',
    'votesPerS',
    'voteP99Ms',
    'voteNon2xx',
    'readerReqPerS',
    'readerP99Ms',
    'readerNon2xx',
    'publishLiveP50Ms',
    'publishLiveP95Ms',
    'load1',
  ] as const;
  console.log(
    table(
      ['figure', ...results.map((r) => r.setup)],
      keys.map((key) => [key, ...results.map((r) => String(r[key]))]),
    ),
  );
  const file = path.join(ROOT, 'bench/results/servers.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    `${JSON.stringify(
      {
        takenAt: new Date().toISOString(),
        machine,
        options: { articles: ARTICLES, votes: VOTES, durationS: DURATION_S, publishes: PUBLISHES, connections: 10 },
        loadBefore,
        loadAfter,
        detail,
        setups: results,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nWritten to ${path.relative(ROOT, file)}`);
}

main().catch((error: unknown) => {
  console.error(`[servers] FAILED: ${(error as Error).stack ?? String(error)}`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
