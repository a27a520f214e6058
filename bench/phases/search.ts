/** Search: /api/search latency, the Pagefind index and what a reader downloads for a query, and publish -> findable. */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { Article } from '../../src/schemas/article.ts';
import type { ApiClient } from '../../tests/helpers/server.ts';
import { searchOnce } from '../browser.ts';
import { waitUntil, type BenchServer } from '../processes.ts';
import { notes, quantile, record } from '../report.ts';

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

const QUERIES = [
  'election',
  'interest rates',
  'climate',
  'festival',
  'Lisbon',
  'championship final',
  'encryption',
  'housing market',
  'Amara Okafor',
  'refugees border',
  'budget reform',
  'satellite',
];

export async function measureSearchApi(server: BenchServer, rounds: number): Promise<void> {
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

export async function measurePagefind(
  server: BenchServer,
  admin: ApiClient,
  browser: Browser,
  clientDir: string,
  rebuildOutput: string,
): Promise<void> {
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
  notes.push(
    `Pagefind first query: ${first.pagefindRequests} requests, ${first.bundles} of ${periods.length} bundles merged; a CDP session on the page alone saw ${Math.round(first.pageOnlyBytes / 1024)} KB`,
  );
  // A page past what the recent bundles hold: the reader asks for older articles, every bundle is merged.
  const archive = await searchOnce(browser, server.url, 'election', undefined, 20_000, 60);
  record(
    'search',
    `Pagefind query for page 60 (past the recent bundles: the older ones merged too; ${periods.length} bundles)`,
    Math.round(archive.pagefindBytes / 1024),
    'KB',
    `${archive.pagefindRequests} requests, ${archive.bundles} bundles`,
  );
  for (const line of rebuildOutput.matchAll(/search bundle\s+(\S+): (\d+) pages in ([\d.]+) s/g)) {
    record(
      'search',
      `index one bundle in the full rebuild: ${line[1]} (${line[2]} pages)`,
      Number(line[3]),
      's',
      `${((Number(line[3]) / Number(line[2])) * 1000).toFixed(1)} ms a page`,
    );
  }

  // A word no generated article contains, so "found" means the new page is in the index.
  const word = `zephyrine${Date.now().toString(36)}`;
  const t0 = performance.now();
  const created = await admin.post('/api/articles', {
    title: `Bench findable ${word}`,
    bodyHtml: `<p>The ${word} story.</p>`,
    section: 'world',
    status: 'published',
  });
  const article = (await created.json()) as Article;
  const found = await waitUntil(240_000, async () => (await searchOnce(browser, server.url, word, `/article/${article.slug}`, 3000)).found);
  const ms = performance.now() - t0;
  const rebuilt = [...server.output().matchAll(/search index rebuilt: (\d+) pages in (\d+) ms/g)].at(-1);
  const firstBuild = server.searchBuilds.find((at) => at > t0);
  const detail = [
    rebuilt ? `last index rebuild took ${(Number(rebuilt[2]) / 1000).toFixed(1)} s` : '',
    firstBuild ? `first rebuild after publish reported at ${((firstBuild - t0) / 1000).toFixed(1)} s` : '',
  ]
    .filter(Boolean)
    .join('; ');
  record('search', 'publish -> findable through Pagefind', found ? Number((ms / 1000).toFixed(1)) : 'not within 240 s', 's', detail);
}
