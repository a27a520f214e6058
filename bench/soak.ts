/**
 * `npm run bench:soak [-- --minutes N] [--store lowdb|pg|both] [--faults list]`: a realistic mix through nginx
 * for N minutes per store while the faults of issue 31 come in turn; then every acknowledged write is read
 * back, memory and open fds are judged for flatness, and every 5xx other than an announced 503 is counted.
 * Writes bench/results/soak-<store>.json and prints a summary.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/index.ts';
import { briefingKey } from '../src/server/briefing/service.ts';
import { childProcessesNamed } from './process-tree.ts';
import { createDatabase, postgresBinDir, startCluster, type Cluster } from '../tests/helpers/postgres.ts';
import { nginxAvailable, startBalancer, startFront, type RunningNginx } from '../tests/helpers/nginx.ts';
import { children, runNode } from './children.ts';
import {
  checkBriefing,
  checkComments,
  checkCreated,
  checkFeed,
  checkPages,
  checkSaves,
  checkSearchIndex,
  checkVotes,
  type BriefingCheck,
} from './soak/checks.ts';
import { createFaults, FAULT_NAMES, type Fault, type FaultContext, type FaultName, type Store } from './soak/faults.ts';
import { CLASSES, Ledger } from './soak/ledger.ts';
import { startSoakFeeds, startSoakSmtp } from './soak/peers.ts';
import { FD_ALLOWANCE, RSS_ALLOWANCE, startWatch, trendOf } from './soak/samples.ts';
import { createServer, mountDisk, type SoakServer } from './soak/servers.ts';
import { createSession, send, signIn, startMix, type Story } from './soak/traffic.ts';
import { NAV_SECTIONS } from '../src/schemas/sections.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = { username: 'soak-admin', password: 'soak-password-not-secret' };
const started = performance.now();
const say = (line: string) => console.log(`[soak ${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    store: { type: 'string', default: 'both' },
    faults: { type: 'string', default: FAULT_NAMES.join(',') },
    readers: { type: 'string', default: '6' },
    subscribers: { type: 'string', default: '300' },
    sample: { type: 'string', default: '2' },
    keep: { type: 'boolean', default: false },
  },
});
const MINUTES = Number(values.minutes);
const READERS = Number(values.readers);
const SUBSCRIBERS = Number(values.subscribers);
const SAMPLE_S = Number(values.sample);
const STORES: Store[] = values.store === 'both' ? ['lowdb', 'pg'] : [values.store as Store];
const ASKED = values.faults.split(',').filter(Boolean) as FaultName[];
if (!(MINUTES >= 1 && MINUTES <= 600)) throw new Error('--minutes takes 1 to 600');
if (!STORES.every((s) => s === 'lowdb' || s === 'pg')) throw new Error('--store takes lowdb, pg or both');
for (const name of ASKED) if (!FAULT_NAMES.includes(name)) throw new Error(`unknown fault ${name}; the faults: ${FAULT_NAMES.join(', ')}`);
if (!(READERS >= 0 && READERS <= 200)) throw new Error('--readers takes 0 to 200 visits a second');
if (!Number.isInteger(SUBSCRIBERS) || SUBSCRIBERS < 10) throw new Error('--subscribers takes 10 or more');
if (!(SAMPLE_S >= 0.5 && SAMPLE_S <= 60)) throw new Error('--sample takes 0.5 to 60 seconds');

const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
const load = () => os.loadavg().map((l) => round(l, 2));

/** What an interrupted run must still undo (a tmpfs, a PostgreSQL cluster, temp folders), newest first. */
const undo = new Map<string, () => void>();
process.once('SIGINT', () => {
  for (const child of children) child.kill('SIGKILL');
  // The servers must be gone before their tmpfs can go (umount -l detaches it either way).
  setTimeout(() => {
    for (const step of [...undo.values()].reverse()) {
      try {
        step();
      } catch (error) {
        console.error(`[soak] cleaning up: ${(error as Error).message}`);
      }
    }
    process.exit(130);
  }, 500);
});

/** Each fault's slot (on, then recovery) is at least this long. */
const MIN_SLOT_S = 24;
/** The warm-up before the first fault: a tenth of the run, 15 to 60 s. */
const warmupOf = (totalS: number) => Math.min(60, Math.max(15, totalS * 0.1));

/** The mix's rates besides readers: small, as a newsroom's day is; the faults, not the volume, are the test. */
const MIX = { votesPerS: 3, commentsPerS: 0.5, editors: 2, saveEveryS: 2, publishEveryS: 20 };

type Window = { fault: FaultName; item: string; startS: number; endS: number; recoveredByS: number; details: Record<string, unknown> };

/** Waits until every running server's regeneration queue stayed empty for 2 s, at most `timeoutMs`; answers whether it did. */
async function waitForQuiet(servers: readonly SoakServer[], timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  let quietSince: number | undefined;
  while (performance.now() < deadline) {
    const depths = await Promise.all(
      servers
        .filter((s) => s.running())
        .map((s) =>
          fetch(`${s.url}/api/health`, { signal: AbortSignal.timeout(3000) })
            .then((r) => r.json() as Promise<{ jobs: number | null }>)
            .then((h) => h.jobs ?? 1)
            .catch(() => 1),
        ),
    );
    if (depths.every((d) => d === 0)) {
      quietSince ??= performance.now();
      if (performance.now() - quietSince >= 2000) return true;
    } else quietSince = undefined;
    await sleep(250);
  }
  return false;
}

/** Confirmed subscribers written straight into the store before the servers start (sign-up needs a mailbox). */
async function seedSubscribers(dataDir: string, databaseUrl: string | undefined): Promise<void> {
  const store = await openStore(dataDir, 'write', { databaseUrl });
  try {
    const now = new Date().toISOString();
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const n = String(i).padStart(5, '0');
      await store.subscribers.upsert({
        id: `soak-sub-${n}`,
        email: `soak-reader${n}@example.com`,
        token: `soaktoken${n}0000000000`,
        createdAt: now,
        confirmedAt: now,
      });
    }
  } finally {
    await store.close();
  }
}

/** The jobs still in the stored queue (read without the lock, as `npm run briefing` reads the app secret). */
async function listJobsLeft(dataDir: string, databaseUrl: string | undefined) {
  const store = await openStore(dataDir, 'read', { databaseUrl });
  try {
    return (await store.jobs.list(20)).map(({ path: jobPath, attempts, lastError, queuedAt }) => ({
      path: jobPath,
      attempts,
      lastError,
      queuedAt,
    }));
  } finally {
    await store.close();
  }
}

/** Polls every running server until the new story's page shows its title; keeps the time in `created.liveMs`. */
function timeToLive(servers: readonly SoakServer[], story: Story, created: Ledger['created'][number]): void {
  void (async () => {
    const deadline = created.at + 60_000;
    while (performance.now() < deadline) {
      const pages = await Promise.all(
        servers
          .filter((s) => s.running())
          .map((s) =>
            fetch(`${s.url}/article/${story.slug}`, { signal: AbortSignal.timeout(5000) })
              .then(async (r) => r.ok && (await r.text()).includes(story.title))
              .catch(() => false),
          ),
      );
      if (pages.length && pages.every(Boolean)) {
        created.liveMs = Math.round(performance.now() - created.at);
        return;
      }
      await sleep(100);
    }
  })();
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function soak(store: Store, buildDir: string) {
  say(`== ${store}: ${MINUTES} min, load ${load().join(' ')}`);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `meridian-soak-${store}-`));
  // nginx's workers (nobody) serve the served folders below it: mkdtemp's 0700 would send every page to the server.
  fs.chmodSync(workDir, 0o755);
  undo.set(workDir, () => fs.rmSync(workDir, { recursive: true, force: true }));
  const disk = mountDisk(path.join(workDir, 'disk'), 256);
  undo.set(disk.dir, () => disk.unmount());
  const ledger = new Ledger();
  const smtp = await startSoakSmtp();
  const feeds = await startSoakFeeds();
  let cluster: Cluster | undefined;
  let nginx: RunningNginx | undefined;
  const servers: SoakServer[] = [];
  const appSecret = randomBytes(24).toString('hex');
  const loadBefore = load();
  try {
    let databaseUrl: string | undefined;
    if (store === 'pg') {
      cluster = await startCluster();
      undo.set(cluster.dir, () => cluster!.stop());
      databaseUrl = await createDatabase(cluster.url, 'meridian_soak');
    }
    const env: Record<string, string> = {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      SEED: 'none',
      SITE_URL: 'http://localhost:4321',
      OUT_DIR: buildDir,
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      APP_SECRET: appSecret,
      TRUST_PROXY: '1',
      // The per-IP limits are for readers on many addresses; here every reader comes from the bench.
      RATE_LIMIT_FACTOR: '10000',
      // Feeds every 15 s, so a few minutes hold many fetches.
      FEED_FETCH_INTERVAL_MINUTES: '0.25',
      FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
      BRIEFING_TIME: 'off',
      SMTP_URL: smtp.url,
      PURGE_URL: feeds.purgeUrl,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    for (const name of store === 'pg' ? ['a', 'b'] : ['a']) servers.push(await createServer(name, disk.dir, buildDir, env));
    await seedSubscribers(servers[0]!.dataDir, databaseUrl);
    for (const server of servers) say(`  server ${server.name} listening after ${await server.start()} s (port ${server.port})`);
    nginx =
      store === 'pg'
        ? await startBalancer([servers[0]!.port, servers[1]!.port])
        : await startFront({ serveDir: servers[0]!.serveDir, dataDir: servers[0]!.dataDir, serverPort: servers[0]!.port });
    const origin = nginx.url;
    say(
      `  nginx (${store === 'pg' ? 'deploy/nginx-multi.conf' : 'deploy/nginx.conf'}) on ${origin}; disk ${disk.tmpfs ? 'a 256 MB tmpfs' : 'a plain folder (not root)'}`,
    );

    // The newsroom: stories across the sections, the three feeds.
    const admin = createSession();
    if (!(await signIn(ledger, origin, admin, ADMIN))) throw new Error('the admin could not sign in');
    const stories: Story[] = [];
    for (let i = 0; i < 24; i++) {
      const section = NAV_SECTIONS[i % NAV_SECTIONS.length]!;
      const title = `Soak desk story ${i + 1}`;
      const reply = await send(ledger, 'publish', origin, 'POST', '/api/articles', {
        session: admin,
        json: { title, bodyHtml: '<p>First draft.</p>', section, status: 'published', tags: ['soak'], isEditorsPick: i < 3 },
      });
      if (reply?.status !== 201) throw new Error(`could not create a story: ${reply?.status} ${reply?.text}`);
      const article = reply.json() as { id: string; slug: string };
      stories.push({ id: article.id, slug: article.slug, title, section });
    }
    for (const [name, url] of [
      ['Soak Wire', feeds.wireUrl],
      ['Soak Trickle', feeds.trickleUrl],
      ['Soak Endless', feeds.endlessUrl],
    ] as const) {
      const reply = await send(ledger, 'publish', origin, 'POST', '/api/news-sources', {
        session: admin,
        json: { name, type: 'rss', url, section: 'world' },
      });
      if (reply?.status !== 201) throw new Error(`could not add the feed ${name}: ${reply?.status} ${reply?.text}`);
    }
    if (!(await waitForQuiet(servers, 180_000))) say('  WARNING: the regeneration queue did not settle before the run');

    // The schedule: a warm-up, then each fault in a slot of its own (on, then recovery).
    const faults = createFaults();
    const context: FaultContext = {
      store,
      servers,
      disk,
      cluster,
      smtp,
      subscribers: SUBSCRIBERS,
      feeds,
      ledger,
      mix: undefined as unknown as FaultContext['mix'],
      startBriefing: () => undefined,
      say,
    };
    const chosen: Fault[] = [];
    const skipped: Record<string, string> = {};
    for (const name of ASKED) {
      const reason = faults[name].skip(context);
      if (reason) skipped[name] = reason;
      else chosen.push(faults[name]);
    }
    for (const [name, reason] of Object.entries(skipped)) say(`  skipping ${name}: ${reason}`);
    const totalS = MINUTES * 60;
    const warmupS = warmupOf(totalS);
    const slotS = chosen.length ? (totalS - warmupS) / chosen.length : 0;
    if (chosen.length && slotS < 24)
      throw new Error(`--minutes ${MINUTES} is too short for ${chosen.length} faults (each needs at least 24 s)`);
    const faultS = Math.min(60, Math.max(10, slotS * 0.5));

    const briefingCalls: BriefingCheck['calls'] = [];
    let briefing: Promise<void> | undefined;
    const callBriefing = async () => {
      const t0 = performance.now();
      const reply = await send(ledger, 'briefing', servers[0]!.url, 'POST', '/api/newsletter/briefing/run', {
        json: { force: false },
        headers: { 'X-Briefing-Key': briefingKey(appSecret) },
        deadlineMs: 600_000,
      });
      briefingCalls.push({
        status: reply?.status ?? 'no answer',
        seconds: round((performance.now() - t0) / 1000),
        body: reply?.text.slice(0, 500) ?? '',
      });
      say(
        `  briefing call answered ${reply?.status ?? 'nothing'} after ${round((performance.now() - t0) / 1000)} s: ${reply?.text.slice(0, 200) ?? ''}`,
      );
    };
    context.startBriefing = () => {
      briefing ??= callBriefing();
    };

    const watch = startWatch(servers, SAMPLE_S, (t) => ledger.seconds(t));
    const mix = startMix(ledger, stories, {
      origin,
      readers: READERS,
      ...MIX,
      admin: ADMIN,
      onPublished: (story, created) => timeToLive(servers, story, created),
    });
    context.mix = mix;
    const windows: Window[] = [];
    ledger.phase = 'warm-up';
    say(
      `  mix running: ${READERS} reader visits/s, ${MIX.votesPerS} votes/s, a comment every ${1 / MIX.commentsPerS} s, ${MIX.editors} editors saving every ${MIX.saveEveryS} s, a publish every ${MIX.publishEveryS} s, three feeds every 15 s`,
    );
    say(
      `  ${Math.round(warmupS)} s warm-up, then ${chosen.length} fault(s) of ${Math.round(faultS)} s, each followed by ${Math.round(slotS - faultS)} s of recovery`,
    );
    await sleep(warmupS * 1000);
    for (const fault of chosen) {
      ledger.phase = fault.name;
      const startT = performance.now();
      say(`-- ${fault.name} (issue 31, item ${fault.item})`);
      await fault.start(context);
      if (fault.middle) {
        await sleep(Math.max(0, startT + (faultS * 1000) / 2 - performance.now()));
        await fault.middle(context);
      }
      await sleep(Math.max(0, startT + faultS * 1000 - performance.now()));
      await fault.stop(context);
      const endT = performance.now();
      ledger.phase = `${fault.name}: recovery`;
      // A full recovery period after the fault ends, however long ending it took (a server that restarts slowly).
      await sleep((slotS - faultS) * 1000);
      windows.push({
        fault: fault.name,
        item: fault.item,
        startS: ledger.seconds(startT),
        endS: ledger.seconds(endT),
        recoveredByS: ledger.seconds(performance.now()),
        details: { ...fault.details, firstWriteOkAfterEndS: ledger.firstWriteOkAfter(endT) ?? 'none yet' },
      });
    }
    ledger.phase = 'settle';
    say('traffic stopping; waiting for the servers to settle');
    await mix.stop();
    feeds.freezeWire();
    if (briefing) await Promise.race([briefing, sleep(120_000)]);
    // A briefing the mail fault paused is asked again once, as the next cron run would.
    const lastCall = briefingCalls.at(-1);
    if (briefing && (!lastCall || lastCall.status !== 200)) await Promise.race([callBriefing(), sleep(120_000)]);
    const settled = await waitForQuiet(servers, 120_000);
    // One more wire fetch after the last write, so the feed check sees ingestion caught up.
    const wireSeen = feeds.wireRequests.length;
    for (let i = 0; i < 80 && feeds.wireRequests.length < wireSeen + 2; i++) await sleep(500);
    await waitForQuiet(servers, 60_000);
    await watch.stop();
    const queueLeft = Object.fromEntries(
      await Promise.all(
        servers.map(async (s) => [
          s.name,
          await fetch(`${s.url}/api/health`)
            .then((r) => r.json() as Promise<{ jobs: number | null }>)
            .then((h) => h.jobs)
            .catch(() => 'no answer'),
        ]),
      ),
    );
    const jobsLeft = settled ? [] : await listJobsLeft(servers[0]!.dataDir, databaseUrl);
    const pagefindLeft = Object.fromEntries(servers.map((s) => [s.name, s.pid() ? childProcessesNamed('pagefind', s.pid()!).length : 0]));
    if (!settled)
      say(
        `  the regeneration queues did not drain within 120 s: ${JSON.stringify(queueLeft)} job(s) left (${jobsLeft.map((j) => `${j.path}, ${j.attempts} attempt(s)`).join('; ')}); Pagefind processes running: ${JSON.stringify(pagefindLeft)}`,
      );

    ledger.phase = 'check';
    say('reading every acknowledged write back');
    const votes = await checkVotes(ledger, origin);
    const comments = await checkComments(ledger, origin, admin);
    const saves = await checkSaves(ledger, origin, admin);
    const created = await checkCreated(ledger, origin, admin);
    const pages = await checkPages(stories, saves.bodies, servers);
    const feed = await checkFeed(ledger, origin, feeds);
    const mail = checkBriefing(smtp, SUBSCRIBERS, briefingCalls);
    const searchFault = windows.find((w) => w.fault === 'search-kill');
    const search = searchFault ? checkSearchIndex(servers, Date.parse(searchFault.details.endedAt as string)) : undefined;

    // Summaries.
    const processes = watch.series.map((s) => ({
      server: s.server,
      pid: s.pid,
      fromS: s.samples[0]?.[0],
      toS: s.samples.at(-1)?.[0],
      rssMB: trendOf(s.samples, 1, RSS_ALLOWANCE),
      fds: trendOf(s.samples, 2, FD_ALLOWANCE),
      series: s.samples,
    }));
    const judged = processes.filter((p) => p.rssMB.verdict !== 'too short');
    const livePhases = Map.groupBy(
      ledger.created.filter((c) => c.acked),
      (c) => c.phase,
    );
    const publishLive = Object.fromEntries(
      [...livePhases].map(([phase, list]) => {
        const ms = list.flatMap((c) => (c.liveMs === undefined ? [] : [c.liveMs]));
        return [
          phase,
          {
            publishes: list.length,
            p50Ms: quantile(ms, 0.5),
            maxMs: ms.length ? Math.max(...ms) : null,
            notLiveIn60s: list.length - ms.length,
          },
        ];
      }),
    );
    const logProblems = servers.map((server) => ({
      server: server.name,
      levels: server.levels,
      byPhase: Object.fromEntries(
        [
          ...windows.map((w) => [w.fault, w.startS, w.recoveredByS] as const),
          ['after the faults', windows.at(-1)?.recoveredByS ?? 0, Infinity] as const,
          ['whole run', 0, Infinity] as const,
        ].map(([label, from, to]) => {
          const lines = server.problems.filter((p) => ledger.seconds(p.t) >= from && ledger.seconds(p.t) < to);
          const counted = new Map<string, number>();
          for (const line of lines) {
            const key = `${line.level}: ${line.msg.replace(/[0-9a-f]{8}-[0-9a-f-]{27}|\d+(\.\d+)?/g, 'N').slice(0, 120)}`;
            counted.set(key, (counted.get(key) ?? 0) + 1);
          }
          return [label, { lines: lines.length, top: [...counted].sort((a, b) => b[1] - a[1]).slice(0, 6) }];
        }),
      ),
    }));
    const lost = votes.lost + comments.lost + saves.check.lost + created.lost;
    const memoryFlat = judged.length > 0 && judged.every((p) => p.rssMB.verdict === 'flat');
    const fdsFlat = judged.length > 0 && judged.every((p) => p.fds.verdict === 'flat');
    const verdict = {
      acknowledgedWritesLost: lost,
      unexpected5xxOrNoAnswer: ledger.failureCount,
      hangsOver10s: ledger.hangs,
      announced503: ledger.announced,
      nginx5xxWhileAServerWasDown: ledger.serverDown,
      refusedWritesThatLanded: ledger.refusedButApplied.length,
      sessionsLost: ledger.sessionsLost,
      stalePages: pages.stale,
      feedItemsMissing: feed.missing,
      briefingDuplicates: mail.duplicates,
      memory: memoryFlat ? 'flat' : judged.length ? 'growing' : 'not judged (no process lived a minute)',
      fds: fdsFlat ? 'flat' : judged.length ? 'growing' : 'not judged',
      settled,
      queueLeft,
      jobsLeft,
      pagefindProcessesAtEnd: pagefindLeft,
      searchReindexedAfterIndexerKills: search ? search.every((s) => s.rebuiltAfterFault) : 'not run',
    };
    const passed =
      lost === 0 && ledger.failureCount === 0 && pages.stale === 0 && feed.missing === 0 && mail.duplicates === 0 && memoryFlat && fdsFlat;
    const results = {
      takenAt: new Date().toISOString(),
      machine,
      store,
      options: {
        minutes: MINUTES,
        readers: READERS,
        subscribers: SUBSCRIBERS,
        sampleS: SAMPLE_S,
        ...MIX,
        faultS: round(faultS),
        slotS: round(slotS),
        warmupS: round(warmupS),
      },
      loadBefore,
      loadAfter: load(),
      setup: {
        servers: servers.length,
        front: store === 'pg' ? 'deploy/nginx-multi.conf' : 'deploy/nginx.conf',
        disk: disk.tmpfs ? 'tmpfs 256 MB' : 'plain folder',
      },
      passed,
      verdict,
      faults: windows,
      skipped,
      statuses: { total: ledger.totals(), byPhase: ledger.counts },
      readerPages: ledger.pagesServed,
      failureKinds: ledger.failureKinds,
      nginxWhileDown: ledger.serverDownKinds,
      failures: ledger.failures.map((f) => ({
        atS: ledger.seconds(f.startedAt),
        phase: f.phase,
        class: f.cls,
        request: `${f.method} ${f.path}`,
        why: f.why,
        ms: Math.round(f.endedAt - f.startedAt),
        ...(f.body ? { body: f.body } : {}),
      })),
      writes: {
        votes,
        comments,
        saves: saves.check,
        publishes: created,
        refusedButApplied: ledger.refusedButApplied,
        conflicts409: ledger.conflicts,
      },
      pages,
      feed: {
        ...feed,
        hostile: feeds.hostileConnections.map((h) => ({
          kind: h.kind,
          openS: h.ms === undefined ? null : round(h.ms / 1000),
          bytes: h.bytes,
          ...(h.stillOpen ? { stillOpenAtFaultEnd: true } : {}),
        })),
        purgeRequests: feeds.purgeRequests(),
      },
      briefing: { ...mail, droppedAfterData: smtp.stats.dropped, greetingsHeld: smtp.stats.greetingsHeld },
      search,
      publishLive,
      publishes: ledger.created.map((c) => ({ atS: ledger.seconds(c.at), phase: c.phase, acked: c.acked, liveMs: c.liveMs ?? null })),
      readiness: watch.readiness,
      processes,
      logs: logProblems,
    };
    const file = path.join(ROOT, `bench/results/soak-${store}.json`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(results, null, 1)}\n`);
    return { results, ledger, file };
  } finally {
    await nginx?.stop().catch(() => {});
    await Promise.all(servers.map((s) => s.stop().catch(() => {})));
    try {
      if (cluster) undo.delete(cluster.dir);
      cluster?.stop();
    } catch (error) {
      say(`  the PostgreSQL cluster did not stop cleanly: ${(error as Error).message}`);
    }
    await smtp.stop().catch(() => {});
    await feeds.close().catch(() => {});
    disk.unmount();
    undo.delete(disk.dir);
    undo.delete(workDir);
    if (values.keep) say(`kept ${workDir}`);
    else fs.rmSync(workDir, { recursive: true, force: true });
  }
}

type SoakRun = Awaited<ReturnType<typeof soak>>;

function printSummary({ results: r, ledger }: SoakRun): void {
  const { store, faults: windows } = r;
  const counts = ledger.counts;
  const sum = (phase: string, pick: (key: string) => boolean) =>
    Object.values(counts[phase] ?? {}).reduce(
      (total, byStatus) => total + Object.entries(byStatus).reduce((s, [k, n]) => s + (pick(k) ? n : 0), 0),
      0,
    );
  const phases = ['warm-up', ...windows.flatMap((w) => [w.fault, `${w.fault}: recovery`]), 'settle', 'check'];
  console.log(
    `\nMeridian News bench:soak, ${store}; ${MINUTES} min; ${machine}; load ${r.loadBefore.join(' ')} before, ${r.loadAfter.join(' ')} after\n`,
  );
  console.log(
    table(
      ['phase', 'answers', '2xx', '4xx', '503+RA', '5xx other', 'no answer'],
      phases
        .filter((p) => counts[p])
        .map((p) => [
          p,
          String(sum(p, () => true)),
          String(sum(p, (k) => k.startsWith('2'))),
          String(sum(p, (k) => k.startsWith('4'))),
          String(sum(p, (k) => k === '503+Retry-After')),
          String(sum(p, (k) => k.startsWith('5') && k !== '503+Retry-After')),
          String(sum(p, (k) => k === 'no answer')),
        ]),
    ),
  );
  console.log(
    `\nReader pages answered 2xx: ${r.readerPages.fromDisk} by nginx from the served folder, ${r.readerPages.fromServer} by a server`,
  );
  console.log('Statuses per class over the whole run:');
  for (const cls of CLASSES) {
    const row = r.statuses.total[cls];
    if (row)
      console.log(
        `  ${cls.padEnd(9)} ${Object.entries(row)
          .map(([k, n]) => `${k}: ${n}`)
          .join(', ')}`,
      );
  }
  console.log('\nFaults:');
  for (const w of windows)
    console.log(`  ${w.fault.padEnd(11)} ${w.startS}-${w.endS} s, recovery to ${w.recoveredByS} s: ${JSON.stringify(w.details)}`);
  if (Object.keys(r.skipped).length) console.log(`  skipped: ${JSON.stringify(r.skipped)}`);
  console.log('\nAcknowledged writes read back:');
  for (const [name, check] of Object.entries({
    votes: r.writes.votes,
    comments: r.writes.comments,
    saves: r.writes.saves,
    publishes: r.writes.publishes,
  })) {
    console.log(
      `  ${name.padEnd(9)} sent ${check.sent}, acknowledged ${check.acked}, read back ${check.verified}, LOST ${check.lost}${check.examples.length ? `: ${check.examples.slice(0, 3).join('; ')}` : ''}`,
    );
    for (const note of check.notes ?? []) console.log(`            ${note}`);
  }
  console.log(
    `  refused saves that landed anyway: ${r.writes.refusedButApplied.length}; 409 conflicts: ${r.writes.conflicts409}; sessions lost (401): ${r.verdict.sessionsLost}`,
  );
  console.log(
    `  pages: ${r.pages.checked} checked, ${r.pages.stale} stale${r.pages.examples.length ? ` (${r.pages.examples.slice(0, 3).join('; ')})` : ''}`,
  );
  console.log(
    `  wire feed: ${r.feed.served} items served, ${r.feed.stored} stored, ${r.feed.missing} missing; longest gap between wire fetches ${r.feed.wireFetchGapMaxS} s`,
  );
  const hostile = r.feed.hostile;
  if (hostile.length)
    console.log(
      `  hostile answers: ${hostile.map((h) => `${h.kind} ${h.openS ?? '?'} s${h.stillOpenAtFaultEnd ? ' (still open at the end)' : ''}`).join(', ')}`,
    );
  console.log(
    `  briefing: ${r.briefing.subscribers} subscribers, ${r.briefing.received} messages to ${r.briefing.addresses} addresses, ${r.briefing.duplicates} duplicated; summary sent ${r.briefing.summarySent ?? '?'}; calls ${r.briefing.calls.map((c) => `${c.status} after ${c.seconds} s`).join(', ')}`,
  );
  if (r.search)
    console.log(
      `  search index after the indexer kills: ${r.search.map((s) => `${s.server} ${s.rebuiltAfterFault ? 'rebuilt' : 'NOT rebuilt'} (newest bundle ${s.newestBundleAt ?? 'none'})`).join(', ')}`,
    );
  console.log('\nServer log: warn and error lines (access lines aside) per fault window, the most frequent first:');
  for (const log of r.logs)
    for (const [label, phase] of Object.entries(log.byPhase)) {
      if (!phase.lines) continue;
      console.log(`  ${log.server} ${label}: ${phase.lines} line(s)`);
      for (const [line, n] of phase.top.slice(0, label === 'whole run' ? 0 : 4))
        console.log(`      ${String(n).padStart(4)}  ${line.slice(0, 150)}`);
    }
  console.log('\nPublish -> live on every running server:');
  for (const [phase, p] of Object.entries(r.publishLive))
    console.log(
      `  ${phase.padEnd(22)} ${p.publishes} publish(es), p50 ${p.p50Ms} ms, max ${p.maxMs ?? '-'} ms${p.notLiveIn60s ? `, ${p.notLiveIn60s} not live within 60 s` : ''}`,
    );
  console.log('\nProcesses (RSS MB and open fds: start, end, peak, slope a minute over the last half, verdict):');
  for (const p of r.processes)
    console.log(
      `  ${p.server} pid ${p.pid} (${p.fromS}-${p.toS} s): RSS ${p.rssMB.start} -> ${p.rssMB.end}, peak ${p.rssMB.peak}, ${p.rssMB.slopePerMin}/min, ${p.rssMB.verdict}; fds ${p.fds.start} -> ${p.fds.end}, peak ${p.fds.peak}, ${p.fds.slopePerMin}/min, ${p.fds.verdict}`,
    );
  console.log('\nReadiness changes:');
  for (const c of r.readiness)
    console.log(
      `  ${String(c.t).padStart(6)} s ${c.server}: ${c.ready === null ? 'no answer' : c.ready ? 'ready' : 'not ready'}${c.reason ? ` (${c.reason})` : ''}`,
    );
  if (Object.keys(r.nginxWhileDown).length) {
    console.log('\nnginx answers while the harness kept a server down (not failures):');
    for (const [kind, { n, firstS, lastS }] of Object.entries(r.nginxWhileDown).sort((a, b) => b[1].n - a[1].n))
      console.log(`  ${String(n).padStart(5)}  ${kind} (${firstS}-${lastS} s)`);
  }
  if (ledger.failures.length) {
    console.log(`\nFailures (${ledger.failureCount}), by phase, request and reason:`);
    for (const [kind, n] of Object.entries(r.failureKinds)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30))
      console.log(`  ${String(n).padStart(5)}  ${kind}`);
    console.log('The first few, with their answer:');
    for (const f of r.failures.slice(0, 6))
      console.log(
        `  ${String(f.atS).padStart(6)} s [${f.phase}] ${f.class} ${f.request}: ${f.why}${f.body ? ` ${f.body.slice(0, 120)}` : ''}`,
      );
  }
  console.log(`\nVerdict: ${JSON.stringify(r.verdict)}`);
}

async function main(): Promise<void> {
  if (!nginxAvailable())
    throw new Error('bench:soak needs nginx and its brotli module (apt-get install -y nginx libnginx-mod-http-brotli-static)');
  if (STORES.includes('pg') && !postgresBinDir()) throw new Error('bench:soak --store pg needs PostgreSQL (apt-get install -y postgresql)');
  for (const store of STORES) {
    // The same rule as each fault's own skip: checked before anything starts.
    const count = ASKED.filter(
      (name) => (name !== 'pg-stop' || store === 'pg') && (name !== 'disk-full' || process.getuid?.() === 0),
    ).length;
    if (count && (MINUTES * 60 - warmupOf(MINUTES * 60)) / count < MIN_SLOT_S)
      throw new Error(`--minutes ${MINUTES} is too short for ${count} faults on ${store} (each needs at least ${MIN_SLOT_S} s)`);
  }
  say(`${MINUTES} min per store (${STORES.join(', ')}); faults ${ASKED.join(', ')}; ${machine}; load ${load().join(' ')}`);
  fs.mkdirSync(path.join(ROOT, '.out'), { recursive: true });
  const buildDir = fs.mkdtempSync(path.join(ROOT, '.out', 'soak-build-'));
  const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-soak-empty-'));
  undo.set(buildDir, () => fs.rmSync(buildDir, { recursive: true, force: true }));
  undo.set(emptyDir, () => fs.rmSync(emptyDir, { recursive: true, force: true }));
  const outcomes: string[] = [];
  try {
    // One small build (an empty store) is the shell every server starts from; the servers render the pages.
    const build = await runNode(
      path.join(ROOT, 'scripts/rebuild.ts'),
      [],
      { OUT_DIR: buildDir, DATA_DIR: emptyDir, SEED: 'none' },
      1_800_000,
    );
    if (build.code !== 0) throw new Error(`the small build failed:\n${build.output.slice(-3000)}`);
    say(`small build in ${round(build.ms / 1000)} s`);
    for (const store of STORES) {
      const run = await soak(store, buildDir);
      printSummary(run);
      say(`written to ${path.relative(ROOT, run.file)}`);
      outcomes.push(`${store}: ${run.results.passed ? 'passed' : 'FAILED'} (${path.relative(ROOT, run.file)})`);
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    fs.rmSync(buildDir, { recursive: true, force: true });
    fs.rmSync(emptyDir, { recursive: true, force: true });
  }
  console.log(`\nbench:soak: ${outcomes.join('; ')}`);
}

main().catch((error: unknown) => {
  console.error(`[soak] FAILED: ${(error as Error).stack ?? String(error)}`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
