/**
 * Where a drawn page's CPU goes inside the render thread (issue 47, part 3): the request round trip
 * around the page against the page itself.
 * `node bench/lab/render-profile.ts DATA_DIR OUT_DIR` runs `npm run rebuild -- --all` once with SITE_NAME
 * changed (a template change: every page drawn and written, like bench/lab/rerender-all.ts) on one render
 * thread, with V8's sampling profiler on every thread (`--cpu-prof`), then sums the render thread's samples
 * by what ran:
 *
 * - the request round trip: light-my-request's fake socket and the Node adapter's request and response
 *   (`node:http` internals, the adapter's handler in the bundle's entry), Astro's app around the route
 *   (routing, middleware, Request and Response objects, reading the body stream back);
 * - the page: Astro's render runtime, our components and React's server renderer;
 * - brotli and gzip (native, under the zlib calls), the messages to the server's thread, Astro's CSP digests,
 *   V8's collector, and the rest.
 *
 * The profiler slows what it samples, so the shares are the result, not the milliseconds. Build the site
 * first (`npm run rebuild` with the same DATA_DIR and OUT_DIR; bench/generate-store.ts makes a store).
 * Writes bench/results/render-profile.json; the site's header keeps the changed name until the next `--all`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseRerenderSummary, rebuild } from '../scale/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const USAGE = 'usage: node bench/lab/render-profile.ts DATA_DIR OUT_DIR';

type CallFrame = { functionName: string; url: string };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

/** The parts a sample is counted in, in the order they are tried on its own frame (its self time). */
const PARTS = [
  ['request round trip: light-my-request', (f: CallFrame) => f.url.includes('/light-my-request/')],
  ['request round trip: node:http and streams', (f: CallFrame) => /^node:(_http|http|stream|internal\/streams|events|buffer)/.test(f.url)],
  ['request round trip: Astro app and Node adapter (bundle entry)', (f: CallFrame) => /\/server\/entry\.mjs$/.test(f.url)],
  ['page: Astro render runtime', (f: CallFrame) => /\/server\/chunks\/sequence_[^/]+\.mjs$/.test(f.url)],
  ['page: React server renderer', (f: CallFrame) => /\/node_modules\/(react|react-dom|scheduler)\//.test(f.url)],
  ['page: our components and libraries (bundle chunks)', (f: CallFrame) => /\/server\/chunks\//.test(f.url)],
  ['brotli and gzip', (f: CallFrame) => f.url === 'node:zlib' || /compress/i.test(f.functionName)],
  ['messages to and from the server thread (structured copies)', (f: CallFrame) => f.functionName === 'postMessage'],
  ["Astro's CSP digests of the inline styles and scripts (WebCrypto)", (f: CallFrame) => f.url.startsWith('node:internal/crypto/')],
  ["V8's collector", (f: CallFrame) => f.functionName === '(garbage collector)'],
  ['idle (waiting for the next page)', (f: CallFrame) => f.functionName === '(idle)'],
  [
    'web platform: Request, Response, Headers, URL, TextEncoder',
    (f: CallFrame) => /^node:internal\/(deps\/undici|url|encoding|webstreams)/.test(f.url),
  ],
  ['V8 itself (program)', (f: CallFrame) => f.functionName === '(program)'],
  ['native builtins (text encoding, JSON, microtasks)', (f: CallFrame) => f.url === ''],
  ['other', () => true],
] as const;

/** Self time (µs) by part and by function (the top ones), of one profile. */
function summarise(profile: CpuProfile): { parts: Map<string, number>; functions: Map<string, number>; totalUs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const us = profile.timeDeltas[i] ?? 0;
    if (!node || us <= 0) continue;
    const frame = node.callFrame;
    const part = PARTS.find(([, test]) => test(frame))![0];
    parts.set(part, (parts.get(part) ?? 0) + us);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|server)\//, '$1/')}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    totalUs += us;
  }
  return { parts, functions, totalUs };
}

const [dataArg, outArg, ...rest] = process.argv.slice(2);
if (!dataArg || !outArg || rest.length > 0) throw new Error(USAGE);
const dataDir = path.resolve(dataArg);
const outDir = path.resolve(outArg);
if (!fs.existsSync(path.join(outDir, 'client'))) throw new Error(`${outDir}/client does not exist: build the site first (${USAGE})`);

const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-render-profile-'));
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
console.log(`[render-profile] npm run rebuild -- --all on one render thread, profiled into ${profileDir}...`);
const result = await rebuild(dataDir, outDir, ['--all'], {
  SITE_NAME: `Meridian News ${new Date().toISOString().slice(0, 16)}`,
  RENDER_THREADS: '1',
  NODE_OPTIONS: `--max-old-space-size=16384 --cpu-prof --cpu-prof-dir=${profileDir}`,
});
if (result.code !== 0) throw new Error(`rebuild --all failed:\n${result.output.slice(-3000)}`);
const summary = parseRerenderSummary(result.output);
if (!summary) throw new Error(`no "pages rendered" line in the rebuild's output:\n${result.output.slice(-3000)}`);

// The render thread's profile is the one whose frames include the thread's own module.
const renderProfiles = fs
  .readdirSync(profileDir)
  .filter((name) => name.endsWith('.cpuprofile'))
  .map((name) => JSON.parse(fs.readFileSync(path.join(profileDir, name), 'utf8')) as CpuProfile)
  .filter((profile) => profile.nodes.some((n) => n.callFrame.url.endsWith('/render-thread-worker.ts')));
if (renderProfiles.length !== 1) throw new Error(`expected one render thread's profile in ${profileDir}, found ${renderProfiles.length}`);
const { parts, functions, totalUs } = summarise(renderProfiles[0]!);
fs.rmSync(profileDir, { recursive: true, force: true });

const busyUs = totalUs - (parts.get('idle (waiting for the next page)') ?? 0);
const perPage = (us: number) => Math.round((us / summary.pages / 1000) * 1000) / 1000;
const share = (us: number) => Math.round((us / busyUs) * 1000) / 10;
const rows = [...parts]
  .filter(([part]) => !part.startsWith('idle'))
  .sort((a, b) => b[1] - a[1])
  .map(([part, us]) => ({ part, msPerPage: perPage(us), sharePct: share(us) }));
const top = [...functions]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 40)
  .map(([fn, us]) => ({ fn, msPerPage: perPage(us), sharePct: share(us) }));

console.log(
  `[render-profile] ${summary.pages} pages (${summary.written} written) in ${summary.renderS} s; the render thread busy ${perPage(busyUs)} ms a page (profiled)`,
);
for (const row of rows)
  console.log(`  ${row.part.padEnd(62)} ${row.msPerPage.toFixed(3).padStart(7)} ms  ${row.sharePct.toFixed(1).padStart(5)}%`);
const file = path.join(ROOT, 'bench/results/render-profile.json');
fs.writeFileSync(
  file,
  `${JSON.stringify({ takenAt: new Date().toISOString(), commit, machine, dataDir, pages: summary.pages, written: summary.written, busyMsPerPage: perPage(busyUs), parts: rows, topFunctions: top }, null, 2)}\n`,
);
console.log(`Written to ${path.relative(ROOT, file)}`);
