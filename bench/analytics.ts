/**
 * `npm run bench:analytics [-- --duration S] [--views N]`: page views over time (issue 33). Measures
 * (1) views a second at the store level (the recorder's batching and one flush per 100,000 views, on
 * lowdb and on PostgreSQL), (2) page-view beacons a second over HTTP against the built server, and
 * (3) the vote p99 while such a burst of beacons runs, beside the vote p99 on a quiet server.
 * Needs a build (`npm run build`, or OUT_DIR naming one). Writes bench/results/analytics.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/index.ts';
import type { Store } from '../src/store/types.ts';
import { ViewRecorder, type PageView } from '../src/server/analytics/recorder.ts';
import { setClock } from '../src/server/clock.ts';
import { NAV_SECTIONS } from '../src/schemas/common.ts';
import { startCluster } from '../tests/helpers/postgres.ts';
import { beaconRequest, seedStories, startBeaconServer } from './beacon-server.ts';
import { runLoad } from './children.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    views: { type: 'string', default: '500000' },
    store: { type: 'string', default: 'both' },
  },
});
const durationS = Number(values.duration);
const totalViews = Number(values.views);
const ARTICLES = 500;
const BATCH = 100_000;
/** Issue 33's target: beacons a second over HTTP on this machine. */
const BEACON_TARGET = 2000;

type Row = { figure: string; value: number; unit: string; target?: string; note?: string };
const rows: Row[] = [];
const load = () => os.loadavg()[0]!.toFixed(1);

const REFERRERS: PageView['referrer'][] = [
  { kind: 'direct', host: '(direct)' },
  { kind: 'search', host: 'google.com' },
  { kind: 'social', host: 't.co' },
  { kind: 'newsletter', host: 'newsletter' },
  { kind: 'other', host: 'news.example.org' },
];
const DEVICES: PageView['device'][] = ['mobile', 'desktop', 'tablet'];

/** Store level: views through the recorder, flushed a batch at a time as a busy server would; the clock moves a minute a batch. */
async function measureStore(label: string, store: Store): Promise<void> {
  const recorder = new ViewRecorder(store.analytics, 'Europe/Berlin', { error: (_o, message) => console.error(message) });
  let clock = Date.parse('2026-06-01T08:00:00Z');
  setClock(() => clock);
  const views: PageView[] = Array.from({ length: 4096 }, (_, i) => ({
    section: NAV_SECTIONS[i % NAV_SECTIONS.length]!,
    articleId: `bench-${i % ARTICLES}`,
    referrer: REFERRERS[i % REFERRERS.length]!,
    device: DEVICES[i % DEVICES.length]!,
  }));
  const started = performance.now();
  let recordMs = 0;
  try {
    for (let done = 0; done < totalViews;) {
      const batch = Math.min(BATCH, totalViews - done);
      const t0 = performance.now();
      for (let i = 0; i < batch; i++) recorder.record(views[(done + i) & 4095]!);
      recordMs += performance.now() - t0;
      await recorder.flush();
      done += batch;
      clock += 61_000;
    }
    await recorder.stop();
  } finally {
    setClock(undefined);
  }
  const seconds = (performance.now() - started) / 1000;
  rows.push({
    figure: `views a second at the store level, ${label}`,
    value: Math.round(totalViews / seconds),
    unit: 'views/s',
    target: '>= 50,000',
    note: `${totalViews} views, flushed ${Math.ceil(totalViews / BATCH)} times; recording ${Math.round(recordMs)} ms, storing ${Math.round(seconds * 1000 - recordMs)} ms; load ${load()}`,
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux): what a request costs whatever the machine's load. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function measureHttp(): Promise<void> {
  process.env.OUT_DIR ??= fs.existsSync(path.join(ROOT, 'dist/server/entry.mjs')) ? 'dist' : '.out/test';
  const { dataDir, ids } = await seedStories(50);
  const server = await startBeaconServer(dataDir);
  try {
    const beacon = { ...beaconRequest(server.url, { path: '/article/bench-story-7', ref: 'newsletter' }), connections: 50, durationS };
    const votes = { url: server.url, connections: 4, durationS, votes: { articleIds: ids, origin: server.url } };
    const pid = server.process.pid!;
    let cpu = cpuSeconds(pid);
    const quiet = await runLoad(votes);
    const voteCpuMs = ((cpuSeconds(pid) - cpu) * 1000) / Math.max(1, quiet.ok);
    rows.push({
      figure: 'vote p99, quiet server',
      value: quiet.p99ExactMs,
      unit: 'ms',
      note: `${Math.round(quiet.rps)} votes/s, load ${load()}`,
    });
    cpu = cpuSeconds(pid);
    const burst = await runLoad(beacon);
    const beaconCpuMs = ((cpuSeconds(pid) - cpu) * 1000) / Math.max(1, burst.ok);
    rows.push({
      figure: "server CPU per beacon (the server's user + system time / beacons answered)",
      value: Math.round(beaconCpuMs * 1000),
      unit: 'us',
      note: `about ${Math.round(1000 / beaconCpuMs)} beacons/s per free core; a vote costs ${Math.round(voteCpuMs * 1000)} us`,
    });
    rows.push({
      figure: 'beacons a second over HTTP (50 connections)',
      value: Math.round(burst.rps),
      unit: 'beacons/s',
      target: '>= 2,000',
      note: `${burst.ok} answered 204, ${burst.non2xx} other, ${burst.errors} errors, p99 ${burst.p99ExactMs.toFixed(1)} ms, load ${load()}`,
    });
    // The target's case: beacons at the target rate, paced (arrivals spread evenly, whatever the answers
    // take), and one voter after another beside them. The paced generator holds a core of its own (it
    // polls), so the votes come from autocannon, which does not: two pollers and the server on 2 cores
    // would time the machine.
    const [during, beacons] = await Promise.all([
      runLoad({ ...votes, connections: 1 }),
      runLoad({ ...beacon, connections: 25, rate: BEACON_TARGET }),
    ]);
    rows.push({
      figure: `vote p99 during a beacon burst (${BEACON_TARGET.toLocaleString('en')} beacons/s)`,
      value: during.p99ExactMs,
      unit: 'ms',
      target: '<= 50',
      note: `${Math.round(during.rps)} votes/s beside ${Math.round(beacons.rps)} beacons/s (beacon p99 ${beacons.p99ExactMs.toFixed(1)} ms), load ${load()}`,
    });
    // And beside as many beacons as the server answers (closed loops on a full core): for the record.
    const [saturated, flood] = await Promise.all([runLoad(votes), runLoad({ ...beacon, connections: 25 })]);
    rows.push({
      figure: 'vote p99 beside a beacon flood (both closed loops, the core full)',
      value: saturated.p99ExactMs,
      unit: 'ms',
      note: `${Math.round(saturated.rps)} votes/s beside ${Math.round(flood.rps)} beacons/s, load ${load()}`,
    });
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(server.clientDir, { recursive: true, force: true });
  }
}

const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-views-'));
try {
  if (values.store !== 'pg') {
    const lowdb = await openStore(path.join(storeDir, 'lowdb'), 'write', { databaseUrl: undefined });
    try {
      await measureStore('lowdb', lowdb);
    } finally {
      await lowdb.close();
    }
  }
  if (values.store !== 'lowdb') {
    const cluster = process.env.DATABASE_URL ? undefined : await startCluster();
    const pg = await openStore(path.join(storeDir, 'pg'), 'write', { databaseUrl: process.env.DATABASE_URL ?? cluster!.url });
    try {
      await measureStore(process.env.DATABASE_URL ? 'postgresql' : 'postgresql (test cluster, fsync off)', pg);
    } finally {
      await pg.close();
      cluster?.stop();
    }
  }
  await measureHttp();
} finally {
  fs.rmSync(storeDir, { recursive: true, force: true });
}

console.table(rows);
const out = path.join(ROOT, 'bench/results/analytics.json');
fs.writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), cpus: os.cpus().length, rows }, null, 2)}\n`);
console.log(`wrote ${path.relative(ROOT, out)}`);
process.exit(0);
