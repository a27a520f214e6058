/**
 * An investigation of the write bursts (`npm run bench:scale -- --bursts-only DIR [--bursts N]`, or
 * `node bench/lab/scale-bursts.ts DIR [--sizes ...] [--bursts N]`): the bursts alone, `--bursts` of them per size,
 * against the data and site a `bench:scale --keep` run left (DIR/data-N, .out/scale-N), readers straight to the
 * server: a couple of minutes per try at 100,000 articles where the whole bench takes half an hour, for trying what
 * moves the event loop. Writes bench/results/scale-bursts.json (not committed).
 *
 * Its switches, for looking inside the server (none of them is part of the regression bench):
 * - BENCH_CPU_PROF=1: the server writes a CPU profile into DIR, every event-loop reading is kept there, with when
 *   each delay over 10 ms ended on the profile's clock (bench/lab/loop-probes.ts);
 * - BENCH_SERVER_FLAGS='...': Node or V8 flags for the server (say --trace-gc-nvp); its output is kept in DIR;
 * - BENCH_SCHED_PROBE=1: every delay over 15 ms with the time the thread ran and waited for a core in it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadJob } from '../load.ts';
import { round, table } from '../scale/figures.ts';
import { parseOptions, type Options } from '../scale/options.ts';
import {
  NETWORK_CPUS,
  ALL_CPUS,
  pinBench,
  startScaleServer,
  waitForIdleQueue,
  type LoopDelay,
  type ServerProbes,
} from '../scale/server.ts';
import { burstJob, burstLine, burstOnce, signInAndList, startFeedServer, writesOf } from '../scale/writes.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The server's extra flags and probes, from BENCH_CPU_PROF, BENCH_SERVER_FLAGS and BENCH_SCHED_PROBE. */
function serverProbes(workDir: string): ServerProbes {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${workDir}`] : [];
  const extra = process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const probing = Boolean(process.env.BENCH_CPU_PROF || process.env.BENCH_SCHED_PROBE);
  return {
    nodeArgs: [...profile, ...extra],
    env: probing ? { BENCH_LOOP_PROBES: path.join(ROOT, 'bench/lab/loop-probes.ts') } : {},
    // With a CPU profile, every reading is kept (it lists when each long delay ended, to find it in the profile).
    ...(profile.length
      ? { onReading: (file, pid) => fs.copyFileSync(file, path.join(workDir, `event-loop-delay-${pid}-${Date.now()}.json`)) }
      : {}),
    ...(extra.length ? { onStopped: (output, pid) => fs.writeFileSync(path.join(workDir, `server-${pid}.log`), output) } : {}),
  };
}

/** The bursts of every size in `options.sizes`, against what a kept run left in `workDir`; a table, and bench/results/scale-bursts.json. */
export async function burstsOnly(options: Options, workDir: string, machine: string, say: (line: string) => void): Promise<void> {
  const probes = serverProbes(workDir);
  const rows: { articles: number; burst: number; writes: string; readerP99Ms: number; loop: LoopDelay }[] = [];
  for (const articles of options.sizes) {
    const dataDir = path.join(workDir, `data-${articles}`);
    const outDir = path.join(ROOT, '.out', `scale-${articles}`);
    for (const needed of [dataDir, outDir])
      if (!fs.existsSync(needed)) throw new Error(`--bursts-only needs ${needed}, which a run with --keep leaves`);
    say(`== ${articles.toLocaleString('en-US')} articles: ${options.bursts} bursts of ${options.durationS} s`);
    const server = await startScaleServer(dataDir, outDir, workDir, probes);
    const feeds = await startFeedServer();
    pinBench(NETWORK_CPUS);
    try {
      await fetch(`${server.url}/api/search?q=election`).then((r) => r.text());
      const { admin, listed } = await signInAndList(server);
      // The save and render code warmed up, as the full run's timed saves do before its bursts.
      for (const article of listed.slice(0, 10)) await (await admin.put(`/api/articles/${article.id}`, { title: article.title })).text();
      await waitForIdleQueue(server.url);
      const job = await burstJob(
        server,
        admin,
        feeds.url,
        listed,
        listed.slice(0, 50).map((a) => a.id),
        options,
      );
      const readers: LoadJob = {
        url: `${server.url}/article/${listed[0]!.slug}`,
        connections: 10,
        durationS: options.durationS,
        rate: options.readerRate,
      };
      for (let burst = 1; burst <= options.bursts; burst++) {
        const run = await burstOnce(server, job, readers);
        say(`  burst ${burst} (${writesOf(run.wrote)}): ${burstLine(run)}`);
        rows.push({ articles, burst, writes: writesOf(run.wrote), readerP99Ms: round(run.readers.p99ExactMs), loop: run.loop });
        await waitForIdleQueue(server.url);
      }
    } finally {
      await server.stop();
      await feeds.close();
      pinBench(ALL_CPUS);
    }
  }
  console.log(`\nMeridian News bench:scale --bursts-only; ${machine}\n`);
  console.log(
    table(
      ['articles', 'burst', 'event loop max', 'own CPU in it', 'delays > 20 ms (waiting)', 'longest GC pause', 'readers p99 (direct)'],
      rows.map((r) => [
        r.articles.toLocaleString('en-US'),
        String(r.burst),
        `${r.loop.maxMs} ms`,
        `${r.loop.longestDelayCpuMs} ms`,
        `${r.loop.delaysOver20} (${r.loop.delaysOver20Waiting})`,
        `${r.loop.gcMaxMs} ms ${r.loop.gcMaxKind}`,
        `${r.readerP99Ms} ms`,
      ]),
    ),
  );
  const file = path.join(ROOT, 'bench/results/scale-bursts.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ takenAt: new Date().toISOString(), machine, options, bursts: rows }, null, 2)}\n`);
  console.log(`\nWritten to ${path.relative(ROOT, file)}`);
}

// Run on its own: `node bench/lab/scale-bursts.ts DIR [--sizes 1000] [--bursts N] [--duration S]`.
if (import.meta.main) {
  const started = performance.now();
  const say = (line: string) => console.log(`[bursts ${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);
  const dir = process.argv[2];
  if (!dir || dir.startsWith('--')) throw new Error('usage: node bench/lab/scale-bursts.ts DIR [--sizes 1000] [--bursts N]');
  const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  await burstsOnly(parseOptions(process.argv.slice(3)), path.resolve(dir), machine, say);
}
