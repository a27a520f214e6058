/**
 * What each brotli quality and gzip level costs and saves on a site's real pages (issue 47): bytes and
 * CPU a page, by kind of page (articles, listings' first pages, deeper listing pages, feeds and
 * sitemaps), for choosing a level per tier of pages.
 *
 *   node bench/lab/compression-levels.ts CLIENT_DIR [--sample 300] [--rounds 3]
 *
 * CLIENT_DIR is a built served folder (OUT_DIR/client). Up to `--sample` files of each kind are taken,
 * spread evenly over the kind's files; each is compressed at each level `--rounds` times on this
 * thread, with the options the site uses (compress.ts: text mode and the size hint for brotli), and the
 * thread's CPU time is measured. Writes bench/results/compression-levels.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { threadCpuMicros } from '../../src/server/thread-cpu.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const USAGE = 'usage: node bench/lab/compression-levels.ts CLIENT_DIR [--sample 300] [--rounds 3]';
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { sample: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } },
});
const clientDir = path.resolve(positionals[0] ?? '');
if (!positionals[0] || !fs.existsSync(clientDir)) throw new Error(USAGE);
const sample = Number(values.sample);
const rounds = Number(values.rounds);

const BROTLI_QUALITIES = [1, 3, 4, 5, 6, 7, 9, 11] as const;
const GZIP_LEVELS = [1, 4, 6, 9] as const;

/** The kind of a served file, by its path (undefined: not one the worker writes). */
function kindOf(relative: string): string | undefined {
  if (/^article\/[^/]+\/index\.html$/.test(relative)) return 'article';
  if (/^(section|tag|author)\/[^/]+\/index\.html$/.test(relative) || relative === 'index.html') return 'listing, first page';
  if (/^(section|tag|author)\/[^/]+\/page\/\d+\/index\.html$/.test(relative)) return 'listing, deeper page';
  if (/\.xml$/.test(relative)) return 'feed or sitemap';
  return undefined;
}

const byKind = new Map<string, string[]>();
for (const entry of fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const relative = path.relative(clientDir, path.join(entry.parentPath, entry.name));
  const kind = kindOf(relative);
  if (kind) byKind.set(kind, [...(byKind.get(kind) ?? []), relative]);
}
if (byKind.size === 0) throw new Error(`no pages under ${clientDir}: ${USAGE}`);

/** Every n-th file, so the sample spans the archive, not only its first folder. */
const spread = (files: string[]) => {
  const sorted = files.sort();
  const step = Math.max(1, sorted.length / sample);
  return Array.from({ length: Math.min(sample, sorted.length) }, (_, i) => sorted[Math.floor(i * step)]!);
};

type Level = { encoding: 'br' | 'gzip'; level: number; bytes: number; ratio: number; cpuMsPerFile: number };
type KindResult = { kind: string; files: number; sampled: number; identityBytes: number; levels: Level[] };

function measure(bodies: Buffer[], compress: (body: Buffer) => Buffer): { bytes: number; cpuMsPerFile: number } {
  let bytes = 0;
  let micros = 0;
  for (let round = 0; round < rounds; round++) {
    const started = threadCpuMicros();
    let roundBytes = 0;
    for (const body of bodies) roundBytes += compress(body).byteLength;
    micros += threadCpuMicros() - started;
    bytes = roundBytes;
  }
  return { bytes, cpuMsPerFile: Math.round((micros / 1000 / rounds / bodies.length) * 1000) / 1000 };
}

const results: KindResult[] = [];
for (const [kind, files] of [...byKind].sort()) {
  const picked = spread(files);
  const bodies = picked.map((file) => fs.readFileSync(path.join(clientDir, file)));
  const identityBytes = bodies.reduce((sum, body) => sum + body.byteLength, 0);
  const levels: Level[] = [];
  for (const quality of BROTLI_QUALITIES) {
    const { bytes, cpuMsPerFile } = measure(bodies, (body) =>
      zlib.brotliCompressSync(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
        },
      }),
    );
    levels.push({ encoding: 'br', level: quality, bytes, ratio: Math.round((bytes / identityBytes) * 10000) / 10000, cpuMsPerFile });
  }
  for (const level of GZIP_LEVELS) {
    const { bytes, cpuMsPerFile } = measure(bodies, (body) => zlib.gzipSync(body, { level }));
    levels.push({ encoding: 'gzip', level, bytes, ratio: Math.round((bytes / identityBytes) * 10000) / 10000, cpuMsPerFile });
  }
  results.push({ kind, files: files.length, sampled: picked.length, identityBytes, levels });
  console.log(`\n${kind}: ${picked.length} of ${files.length} files, ${Math.round(identityBytes / picked.length)} bytes each on average`);
  for (const l of levels)
    console.log(
      `  ${l.encoding.padEnd(4)} ${String(l.level).padStart(2)}  ${String(Math.round(l.bytes / picked.length)).padStart(7)} bytes  ` +
        `${(l.ratio * 100).toFixed(1).padStart(5)}%  ${l.cpuMsPerFile.toFixed(3)} ms`,
    );
}

const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)}`;
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const file = path.join(ROOT, 'bench/results/compression-levels.json');
fs.writeFileSync(file, `${JSON.stringify({ takenAt: new Date().toISOString(), commit, machine, clientDir, rounds, results }, null, 2)}\n`);
console.log(`\nWritten to ${path.relative(ROOT, file)}`);
