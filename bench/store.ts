/**
 * `npm run bench:store`: the two stores side by side, through the Store interface in one process
 * (no HTTP): article inserts, concurrent votes, listings, searches and scheduled publishing, on
 * lowdb in a temp DATA_DIR and on PostgreSQL (a throwaway cluster, or DATABASE_URL if set: an
 * empty database). Prints a table and writes bench/results/store.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { openStore, type Store } from '../src/store/index.ts';
import type { ArticleRecord } from '../src/schemas/article.ts';
import { SECTIONS } from '../src/schemas/common.ts';
import { startCluster } from '../tests/helpers/postgres.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    articles: { type: 'string', default: '10000' },
    votes: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '16' },
  },
});
const ARTICLES = Number(values.articles);
const VOTES = Number(values.votes);
const CONCURRENCY = Number(values.concurrency);

const WORDS =
  'election market storm volcano league budget court vaccine climate summit energy border harvest festival museum satellite strike tariff drought reform'.split(
    ' ',
  );
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil(q * xs.length) - 1))]!;
const round1 = (n: number) => Math.round(n * 10) / 10;

function article(i: number, status: ArticleRecord['status'] = 'published'): ArticleRecord {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  const pick = (n: number) => WORDS[(i * 7 + n * 13) % WORDS.length]!;
  const body = Array.from({ length: 40 }, (_, p) => `<p>${Array.from({ length: 12 }, (_, w) => pick(p * 12 + w)).join(' ')}.</p>`).join('');
  return {
    id: `bench-${i}`,
    title: `${pick(1)} ${pick(2)} report ${i}`,
    slug: `bench-${i}`,
    dek: `${pick(3)} and ${pick(4)}`,
    bodyHtml: body,
    section: SECTIONS[i % SECTIONS.length]!,
    tags: [pick(5)],
    authorName: 'Bench Desk',
    createdAt: at,
    updatedAt: at,
    ...(status === 'published' ? { publishedAt: at } : { scheduledFor: '2024-01-01T00:00:00.000Z' }),
    readingTime: 3,
    isEditorsPick: i % 50 === 0,
    isBreaking: false,
    status,
  };
}

/** Runs `count` calls of `task`, `concurrency` at a time; answers each call's milliseconds. */
async function timedPool(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<{ ms: number[]; totalS: number }> {
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await task(i);
        ms.push(performance.now() - t);
      }
    }),
  );
  return { ms, totalS: (performance.now() - started) / 1000 };
}

type Row = {
  store: string;
  insertPerS: number;
  votesPerS: number;
  voteP95Ms: number;
  listP50Ms: number;
  listP95Ms: number;
  searchP50Ms: number;
  searchP95Ms: number;
  publishP50Ms: number;
};

async function measure(name: string, store: Store): Promise<Row> {
  const inserts = await timedPool(ARTICLES, CONCURRENCY, (i) => store.articles.insert(article(i)));
  const votes = await timedPool(VOTES, CONCURRENCY, (i) =>
    store.counters.vote(`bench-${(i * 31) % ARTICLES}`, `visitor-${i % 997}`, i % 3 ? 'like' : 'dislike'),
  );
  const lists = await timedPool(300, 4, (i) =>
    store.articles.list({ statuses: ['published'], section: SECTIONS[i % SECTIONS.length] }, { offset: (i % 10) * 20, limit: 20 }),
  );
  const searches = await timedPool(200, 4, (i) =>
    store.articles.search(
      `${WORDS[i % WORDS.length]} ${WORDS[(i + 3) % WORDS.length]!.slice(0, 3)}`,
      { statuses: ['published'] },
      { offset: 0, limit: 12 },
    ),
  );
  for (let i = 0; i < 100; i++) await store.articles.insert(article(ARTICLES + i, 'scheduled'));
  const publishes = await timedPool(100, 4, (i) => store.articles.publishIfScheduled(`bench-${ARTICLES + i}`, new Date().toISOString()));
  const row = {
    store: name,
    insertPerS: Math.round(ARTICLES / inserts.totalS),
    votesPerS: Math.round(VOTES / votes.totalS),
    voteP95Ms: round1(quantile(votes.ms, 0.95)),
    listP50Ms: round1(quantile(lists.ms, 0.5)),
    listP95Ms: round1(quantile(lists.ms, 0.95)),
    searchP50Ms: round1(quantile(searches.ms, 0.5)),
    searchP95Ms: round1(quantile(searches.ms, 0.95)),
    publishP50Ms: round1(quantile(publishes.ms, 0.5)),
  };
  console.log(`[bench:store] ${name}: ${JSON.stringify(row)}`);
  return row;
}

const rows: Row[] = [];
const lowdbDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-store-'));
const lowdb = await openStore(lowdbDir, 'write', { databaseUrl: undefined });
try {
  rows.push(await measure('lowdb', lowdb));
} finally {
  await lowdb.close();
  fs.rmSync(lowdbDir, { recursive: true, force: true });
}

const cluster = process.env.DATABASE_URL ? undefined : await startCluster();
const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-store-'));
try {
  // A throwaway cluster runs with fsync off (as in the tests); a DATABASE_URL runs as configured.
  const pg = await openStore(pgDir, 'write', { databaseUrl: process.env.DATABASE_URL ?? cluster!.url });
  try {
    rows.push(await measure(process.env.DATABASE_URL ? 'postgresql' : 'postgresql (test cluster, fsync off)', pg));
  } finally {
    await pg.close();
  }
} finally {
  fs.rmSync(pgDir, { recursive: true, force: true });
  cluster?.stop();
}

console.log(`\nstore bench: ${ARTICLES} articles, ${VOTES} votes, ${CONCURRENCY} at a time, ${os.cpus().length} cores\n`);
console.log('| store | inserts/s | votes/s | vote p95 ms | list p50/p95 ms | search p50/p95 ms | publish p50 ms |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows)
  console.log(
    `| ${r.store} | ${r.insertPerS} | ${r.votesPerS} | ${r.voteP95Ms} | ${r.listP50Ms} / ${r.listP95Ms} | ${r.searchP50Ms} / ${r.searchP95Ms} | ${r.publishP50Ms} |`,
  );
const out = path.join(ROOT, 'bench/results/store.json');
fs.writeFileSync(
  out,
  JSON.stringify(
    { measuredAt: new Date().toISOString(), articles: ARTICLES, votes: VOTES, concurrency: CONCURRENCY, cores: os.cpus().length, rows },
    null,
    2,
  ) + '\n',
);
console.log(`\nwritten to ${path.relative(ROOT, out)}`);
