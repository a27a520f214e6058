/**
 * `node bench/lab/search-first.ts LABEL=OUT_DIR [LABEL=OUT_DIR ...] [--rounds N]`: a reader's first search in
 * Debian's Chromium against built sites served by nginx (static files only, as in production), so two
 * search index layouts (say monthly and weekly bundles, each built by its branch) can be compared on the
 * same data: time to the first results, bytes and requests under /pagefind/, bundles merged, for a
 * few queries and for a page past the recent bundles. Writes bench/results/search-first.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, searchOnce, type SearchOnce } from '../browser.ts';
import { children } from '../children.ts';
import { findNginx, startNginx } from '../processes.ts';
import { quantile } from '../report.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const QUERIES = ['election', 'climate', 'housing market', 'satellite'];

type Row = { layout: string; query: string; page: number; bundlesListed: number } & Record<
  'msP50' | 'msMax' | 'kb' | 'requests' | 'bundles' | 'results',
  number
>;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 5;
  const layouts = args.map((arg) => {
    const [label, dir] = arg.split('=');
    if (!label || !dir || !fs.existsSync(path.join(dir, 'client', 'pagefind', 'periods.json')))
      throw new Error(`${arg}: give LABEL=OUT_DIR of a built site with a search index`);
    return { label, clientDir: path.resolve(dir, 'client') };
  });
  if (layouts.length === 0) throw new Error('give at least one LABEL=OUT_DIR');
  const nginx = findNginx();
  if (!nginx) throw new Error('nginx is not installed');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-search-first-'));
  const browser = await launchBrowser();
  const rows: Row[] = [];
  try {
    for (const { label, clientDir } of layouts) {
      const listed = (JSON.parse(fs.readFileSync(path.join(clientDir, 'pagefind', 'periods.json'), 'utf8')) as { periods: string[] })
        .periods.length;
      const server = await startNginx(nginx, clientDir, path.join(workDir, 'images'), workDir, 'auto');
      try {
        for (const [query, page] of [...QUERIES.map((q) => [q, 1] as const), ['election', 60] as const]) {
          const runs: SearchOnce[] = [];
          // A fresh browser context each time: nothing cached, as a reader's first search.
          for (let round = 0; round < rounds; round++) runs.push(await searchOnce(browser, server.url, query, undefined, 30_000, page));
          const last = runs.at(-1)!;
          const row: Row = {
            layout: label,
            query,
            page,
            bundlesListed: listed,
            msP50: Math.round(
              quantile(
                runs.map((r) => r.ms),
                0.5,
              ),
            ),
            msMax: Math.round(Math.max(...runs.map((r) => r.ms))),
            kb: Math.round(last.pagefindBytes / 1024),
            requests: last.pagefindRequests,
            bundles: last.bundles,
            results: last.results,
          };
          rows.push(row);
          console.log(
            `${label.padEnd(10)} ${`${query} p${page}`.padEnd(20)} ${String(row.msP50).padStart(5)} ms p50 (max ${row.msMax}), ${row.kb} KB, ${row.requests} requests, ${row.bundles}/${listed} bundles, ${row.results} results`,
          );
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    await browser.close().catch(() => {});
    for (const child of children) child.kill('SIGKILL');
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  const file = path.join(ROOT, 'bench/results/search-first.json');
  const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, load ${os.loadavg()[0]!.toFixed(2)}`;
  fs.writeFileSync(file, `${JSON.stringify({ takenAt: new Date().toISOString(), machine, rounds, rows }, null, 2)}\n`);
  console.log(`Written to ${path.relative(ROOT, file)}`);
}

main().catch((error: unknown) => {
  console.error(`[search-first] FAILED: ${(error as Error).message}`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
