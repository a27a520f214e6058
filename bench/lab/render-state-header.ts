/**
 * What one change of the render state's header costs (the manifest the worker writes when its queue runs
 * empty, once a publish; the search index's slugs): bytes written and time, with 110,000 page lines in the
 * file, as the header is changed 50 times through the server's path. Writes bench/results/render-state-header.json.
 * `node bench/lab/render-state-header.ts [pages]`
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { updateRenderStateHeaderAsync, writeRenderStateFile } from '../../src/server/publishing/render-state.ts';

const PAGES = Number(process.argv[2] ?? 110_000);
const CHANGES = 50;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-render-state-bench-'));
const file = path.join(dir, 'render-state.json');
const pages = Object.fromEntries(
  Array.from({ length: PAGES }, (_, n) => [
    `/article/an-article-slug-of-usual-length-${n}`,
    { i: `${n}`.padStart(16, '0'), m: 1764300000000 + n, s: 48_000 + n },
  ]),
);
writeRenderStateFile(file, (header) => ({ ...header, rebuild: { build: 'bench', storeId: 'bench' } }), pages);
const fileBytes = fs.statSync(file).size;

const readIo = () => {
  const io = fs.readFileSync('/proc/self/io', 'utf8');
  return Number(/^wchar: (\d+)/m.exec(io)![1]);
};
const times: number[] = [];
const written = readIo();
for (let version = 0; version < CHANGES; version++) {
  const start = performance.now();
  await updateRenderStateHeaderAsync(file, (header) => ({
    ...header,
    manifest: { storeId: 'bench', version, renderedAt: new Date().toISOString(), by: 'server' },
  }));
  times.push(performance.now() - start);
}
const bytesPerChange = Math.round((readIo() - written) / CHANGES);
times.sort((a, b) => a - b);
const result = {
  takenAt: new Date().toISOString(),
  machine: `${os.cpus().length} x ${os.cpus()[0]?.model.trim()}, Node ${process.version}`,
  loadBefore: os.loadavg().map((n) => Math.round(n * 100) / 100),
  pages: PAGES,
  fileMB: Math.round(fileBytes / 1e5) / 10,
  changes: CHANGES,
  bytesWrittenPerChange: bytesPerChange,
  medianMs: Math.round(times[Math.floor(times.length / 2)]! * 100) / 100,
  maxMs: Math.round(times.at(-1)! * 100) / 100,
};
console.log(result);
fs.mkdirSync(path.join(import.meta.dirname, '../results'), { recursive: true });
fs.writeFileSync(path.join(import.meta.dirname, '../results/render-state-header.json'), `${JSON.stringify(result, null, 2)}\n`);
fs.rmSync(dir, { recursive: true, force: true });
