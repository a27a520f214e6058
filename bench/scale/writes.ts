/** bench:scale's write bursts: the writers' process (editors, voters, a feed) on the server's cores while readers arrive. */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../tests/helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { LoadJob, LoadResult } from '../load.ts';
import type { BurstJob, BurstResult } from '../burst-writers.ts';
import { children, NODE, runLoad } from '../children.ts';
import { ADMIN, ALL_CPUS, cpuByThread, PIN, pin, SERVER_BURST_CPUS, waitForIdleQueue, type LoopDelay, type ScaleServer } from './server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

/** A local RSS feed whose items are new on every fetch, for the ingestion part of the burst. */
export function startFeedServer(): Promise<{ url: string; close: () => Promise<void> }> {
  let round = 0;
  const server = http.createServer((_request, response) => {
    round++;
    const items = Array.from(
      { length: 40 },
      (_, i) =>
        `<item><title>Wire report ${round}-${i}</title><link>http://127.0.0.1/wire/${round}-${i}</link><guid>wire-${Date.now()}-${round}-${i}</guid><pubDate>${new Date().toUTCString()}</pubDate><description>${'Agency copy about the harbour expansion and the vote that follows. '.repeat(30)}</description></item>`,
    ).join('');
    response.writeHead(200, { 'Content-Type': 'application/rss+xml' });
    response.end(
      `<?xml version="1.0"?><rss version="2.0"><channel><title>Wire</title><link>http://127.0.0.1/</link><description>Wire</description>${items}</channel></rss>`,
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/feed.xml`, close: () => new Promise<void>((done) => server.close(() => done())) });
    }),
  );
}

/**
 * The burst's writes (bench/burst-writers.ts) on the server's cores, a step below the server's
 * priority and without V8's helper threads, so the editors and voters, who would be elsewhere, do not
 * take the server's core from it for a scheduler slice at a time.
 */
export function runWriters(job: BurstJob): Promise<BurstResult> {
  const command = [
    ...(PIN ? ['/usr/bin/taskset', '-c', SERVER_BURST_CPUS] : []),
    'nice',
    '-n',
    '5',
    NODE,
    '--single-threaded',
    path.join(ROOT, 'bench/burst-writers.ts'),
    JSON.stringify(job),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      children.delete(child);
      const line = output.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`the burst's writers failed: ${output.slice(-2000)}`));
      else resolve(JSON.parse(line) as BurstResult);
    });
  });
}

/** The bench's admin signed in and, once the regeneration queue is idle, the newest 100 published articles. */
export async function signInAndList(server: ScaleServer): Promise<{ admin: ApiClient; listed: Article[] }> {
  const admin = new ApiClient(server.url);
  await admin.login(ADMIN.username, ADMIN.password);
  await waitForIdleQueue(server.url);
  const listed = (await (await admin.get('/api/articles?pageSize=100&status=published')).json()) as Article[];
  return { admin, listed };
}

/**
 * The burst's writes: a news source on the bench's feed (fetched once, so the burst measures the steady state), and the
 * articles saved and voted on.
 */
export async function burstJob(
  server: ScaleServer,
  admin: ApiClient,
  feedUrl: string,
  listed: Article[],
  voteIds: string[],
  options: { durationS: number; writeRate: BurstJob['rate'] },
): Promise<BurstJob> {
  const name = `Bench wire ${Date.now()}`;
  const source = (await (await admin.post('/api/news-sources', { name, url: feedUrl, section: 'business' })).json()) as { id: string };
  await (await admin.post(`/api/news-sources/${source.id}/fetch`)).text();
  await waitForIdleQueue(server.url);
  return {
    origin: server.url,
    admin: ADMIN,
    articleIds: listed.map((a) => a.id),
    voteIds,
    sourceId: source.id,
    durationS: options.durationS,
    ...(options.writeRate ? { rate: options.writeRate } : {}),
  };
}

export type BurstRun = { wrote: BurstResult; readers: LoadResult; loop: LoopDelay };

/** One burst: the writers' process on the server's cores while readers arrive; the server's event loop is read inside it. */
export async function burstOnce(server: ScaleServer, job: BurstJob, readers: LoadJob): Promise<BurstRun> {
  await server.loopDelay();
  pin(server.pid, SERVER_BURST_CPUS);
  const writers = runWriters(job);
  const during = await runLoad(readers);
  const wrote = await writers;
  const loop = await server.loopDelay();
  pin(server.pid, ALL_CPUS);
  return { wrote, readers: during, loop };
}

export const writesOf = (wrote: BurstResult) =>
  `${wrote.saves} saves, ${wrote.votes} votes, ${wrote.ingestions} feed fetches${wrote.failed ? `, ${wrote.failed} failed` : ''}`;

export const burstLine = ({ readers, loop }: BurstRun) =>
  `readers p99 ${round(readers.p99ExactMs)} ms; server event loop max ${loop.maxMs} ms (its own CPU in it ${loop.longestDelayCpuMs} ms; ${loop.delaysOver20} delays over 20 ms, ${loop.delaysOver20Waiting} of them mostly waiting; at most ${loop.mostCpuInOneDelayMs} ms in one delay; longest GC pause ${loop.gcMaxMs} ms, ${loop.gcMaxKind}), p99 ${loop.p99Ms} ms; the event loop ran ${Math.round(loop.mainRunMs)} ms and waited ${Math.round(loop.mainRunQueueMs)} ms for a core; the server's CPU by thread: ${cpuByThread(loop)}`;
