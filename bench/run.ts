/**
 * `npm run bench [-- --articles N] [--quick] [--serving] [--search] [--lighthouse] [--runs N] [--duration S] [--keep]`: builds an
 * N-article newsroom and measures serving, publishing, votes, search, page weight and Lighthouse scores against the targets of issue 7
 * (`--serving`: only the serving comparison and page weight, on 200 articles; `--search`: only Pagefind's figures; `--lighthouse`:
 * only Lighthouse and layout shift, on a 300-article store unless --articles says otherwise, the median of 3 runs per page unless
 * --runs says otherwise);
 * prints one table and writes bench/results/latest.json. Nothing here is a timed test: it only measures. Each phase is a file of
 * bench/phases/.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Browser } from 'playwright-core';
import type { Article } from '../src/schemas/article.ts';
import { ApiClient } from '../tests/helpers/server.ts';
import { launchBrowser } from './browser.ts';
import { children, runNode } from './children.ts';
import { generateStore } from './generate-store.ts';
import { measureLighthouse, prepareLiveArticle } from './phases/lighthouse.ts';
import { measurePublishing } from './phases/publishing.ts';
import { measurePagefind, measureSearchApi } from './phases/search.ts';
import { measureServing } from './phases/serving.ts';
import { measureVotes } from './phases/votes.ts';
import { measureWeight } from './phases/weight.ts';
import { ADMIN, startBenchServer, type BenchServer } from './processes.ts';
import { notes, printTable, record, rows, say, started } from './report.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let machine = '';

type Options = {
  articles: number;
  quick: boolean;
  serving: boolean;
  searchOnly: boolean;
  durationS: number;
  keep: boolean;
  lighthouseOnly: boolean;
  lighthouseRuns: number;
};

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      articles: { type: 'string' },
      quick: { type: 'boolean', default: false },
      // Only the serving comparison and the page weight, on a small store: the loop for tuning the static server.
      serving: { type: 'boolean', default: false },
      search: { type: 'boolean', default: false },
      lighthouse: { type: 'boolean', default: false },
      runs: { type: 'string' },
      duration: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const { quick, serving, lighthouse: lighthouseOnly, search: searchOnly, keep } = values;
  const articles = Number(values.articles ?? (serving ? 200 : lighthouseOnly ? 300 : quick ? 1000 : 10_000));
  const durationS = Number(values.duration ?? (quick ? 5 : 10));
  if (!Number.isInteger(articles) || articles < 16 || articles > 100_000)
    throw new Error('--articles must be an integer from 16 to 100000');
  if (!(durationS >= 1 && durationS <= 60)) throw new Error('--duration must be 1-60 seconds');
  const lighthouseRuns = Number(values.runs ?? (lighthouseOnly ? 3 : 1));
  if (!Number.isInteger(lighthouseRuns) || lighthouseRuns < 1 || lighthouseRuns > 9) throw new Error('--runs must be 1-9');
  return { articles, quick, serving, searchOnly, durationS, keep, lighthouseOnly, lighthouseRuns };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const outDir = path.join(ROOT, '.out', 'bench');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-'));
  const dataDir = path.join(workDir, 'data');
  machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  say(
    `${options.articles} articles, ${options.durationS} s per load run${options.quick ? ' (quick)' : ''}; machine: ${machine}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  say(`data in ${dataDir}, build in ${path.relative(ROOT, outDir)}`);
  let server: BenchServer | undefined;
  let votes: { check: (dataDir: string) => void } | undefined;
  let browser: Browser | undefined;
  try {
    // 1. Data
    const store = await generateStore(dataDir, options.articles, say);
    record(
      'data',
      `generate ${options.articles} articles (avg ${store.words} words, ${store.images} hero images)`,
      Number((store.ms / 1000).toFixed(1)),
      's',
    );
    record('data', 'article files (one per article)', Number((store.bytes / 1048576).toFixed(1)), 'MB');

    // 2. Full build (npm run rebuild: astro build + Pagefind), into the bench's own folder
    say('full rebuild (astro build + Pagefind)...');
    fs.rmSync(outDir, { recursive: true, force: true });
    const rebuild = await runNode(path.join(ROOT, 'scripts/rebuild.ts'), [], { OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none' }, 900_000);
    if (rebuild.code !== 0) throw new Error(`rebuild failed:\n${rebuild.output.slice(-3000)}`);
    const files = Number(/files prerendered\s+(\d+)/.exec(rebuild.output)?.[1] ?? NaN);
    const astroMs = Number(/astro build ([\d.]+) s/.exec(rebuild.output)?.[1] ?? NaN) * 1000;
    const searchMs = Number(/search index\s+\d+ pages \(([\d.]+) s\)/.exec(rebuild.output)?.[1] ?? NaN) * 1000;
    record('build', `full npm run rebuild (${files} files, with Pagefind)`, Number((rebuild.ms / 1000).toFixed(1)), 's');
    record('build', 'astro build alone (npm run build)', Number((astroMs / 1000).toFixed(1)), 's');
    record('build', 'Pagefind index in the rebuild', Number((searchMs / 1000).toFixed(1)), 's');
    const perPage = astroMs / files;
    record('build', 'astro build per page', Number(perPage.toFixed(2)), 'ms', '<= 2', perPage <= 2);
    record('build', 'full rebuild per page', Number((rebuild.ms / files).toFixed(2)), 'ms');

    // 3. Server
    server = await startBenchServer(dataDir, outDir, workDir);
    say(`server on ${server.url}`);
    const admin = new ApiClient(server.url);
    await admin.login(ADMIN.username, ADMIN.password);
    const [sample] = (await (await admin.get('/api/articles?section=world&pageSize=1&status=published')).json()) as Article[];
    if (!sample) throw new Error('no published article to measure');

    if (options.searchOnly) {
      browser = await launchBrowser();
      await measurePagefind(server, admin, browser, path.join(outDir, 'client'), rebuild.output);
      await browser.close();
      browser = undefined;
      await server.stop();
      server = undefined;
      return finish(options);
    }

    // --lighthouse skips the load runs, search and votes: only the browser figures below.
    if (!options.lighthouseOnly) {
      say('reader serving (a) static, (b) per-request render, (c) nginx...');
      await measureServing(server, sample.slug, options, path.join(outDir, 'client'), path.join(dataDir, 'images'), workDir);

      if (options.serving) {
        browser = await launchBrowser();
        await measureWeight(server, browser, sample.slug, path.join(outDir, 'client'));
        await browser.close();
        browser = undefined;
        await server.stop();
        server = undefined;
        return finish(options);
      }

      say('publish -> live...');
      await measurePublishing(server, admin, options.quick ? 20 : 24, rebuild.ms, sample.heroImage);

      say('search...');
      await measureSearchApi(server, options.quick ? 5 : 10);
      browser = await launchBrowser();
      await measurePagefind(server, admin, browser, path.join(outDir, 'client'), rebuild.output);

      say('votes...');
      votes = await measureVotes(server, admin, options);

      await measureWeight(server, browser, sample.slug, path.join(outDir, 'client'));
      await browser.close();
      browser = undefined;
    }

    say('Lighthouse (mobile)...');
    const liveSlug = await prepareLiveArticle(server, admin, sample.slug).catch((error: unknown) => {
      notes.push(`lighthouse live article: not prepared (${(error as Error).message})`);
      return undefined;
    });
    await measureLighthouse(server, sample.slug, options.lighthouseRuns, workDir, liveSlug);

    await server.stop();
    server = undefined;
    votes?.check(dataDir);
  } finally {
    await browser?.close().catch(() => {});
    await server?.stop();
    for (const child of children) child.kill('SIGKILL');
    // The 10,000-article build is half a gigabyte: kept only when asked (--keep), with the data.
    if (!options.keep) {
      fs.rmSync(workDir, { recursive: true, force: true });
      fs.rmSync(outDir, { recursive: true, force: true });
    } else say(`kept: data in ${dataDir}, build in ${outDir}`);
  }

  finish(options);
}

function finish(options: Options): void {
  const missed = rows.filter((r) => r.verdict === 'MISSED');
  const table = printTable();
  console.log(
    `\nMeridian News bench: ${options.articles} articles${options.serving ? ' (--serving: serving and page weight only)' : options.searchOnly ? ' (--search: Pagefind only)' : ''}; ${machine}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the end; ${((performance.now() - started) / 1000).toFixed(0)} s in all\n`,
  );
  console.log(table);
  if (notes.length) console.log(`\nNotes:\n  ${notes.join('\n  ')}`);
  console.log(
    missed.length
      ? `\nMISSED ${missed.length} target(s): ${missed.map((r) => `${r.group}: ${r.figure}`).join('; ')}`
      : '\nEvery target met.',
  );
  const results = path.join(
    ROOT,
    `bench/results/${options.serving ? 'serving' : options.searchOnly ? `search-${options.articles}` : options.lighthouseOnly ? 'lighthouse' : 'latest'}.json`,
  );
  fs.mkdirSync(path.dirname(results), { recursive: true });
  fs.writeFileSync(
    results,
    JSON.stringify(
      {
        takenAt: new Date().toISOString(),
        machine,
        options,
        seconds: Math.round((performance.now() - started) / 1000),
        rows,
        notes,
        missed: missed.length,
      },
      null,
      2,
    ),
  );
  console.log(`\nWritten to ${path.relative(ROOT, results)}`);
}

main().catch((error: unknown) => {
  console.error(`[bench] FAILED: ${(error as Error).stack ?? String(error)}`);
  if (rows.length) console.error(`\nFigures so far:\n${printTable()}`);
  process.exit(1);
});
