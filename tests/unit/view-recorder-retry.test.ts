/**
 * A flush the lowdb store takes only in part (some bucket files refused: a folder stands where a write
 * puts its temp file) is retried without counting twice what was stored: the store says what it did not store, and
 * the recorder puts back only that. Exact counts read back from the files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ViewRecorder, type PageView } from '../../src/server/analytics/recorder.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { bucketFile, bucketOf } from '../../src/store/lowdb/layout.ts';
import { closeQuietly, makeTempDir } from './support.ts';

const AT = Date.UTC(2030, 0, 15, 10, 30, 20);
const DAY = '2030-01-15';

let store: Store | undefined;
afterEach(() => closeQuietly(store));

function view(articleId: string): PageView {
  return { section: 'world', articleId, referrer: { kind: 'direct', host: '(direct)' }, device: 'mobile' };
}

/** Two article ids whose running totals live in different bucket files. */
function idsInTwoBuckets(): [string, string] {
  const first = 'story-a';
  for (let i = 0; ; i++) if (bucketOf('views', `story-${i}`) !== bucketOf('views', first)) return [first, `story-${i}`];
}

/**
 * Makes the store's writes of `file` fail while the file itself stays readable, as on a full disk: a
 * folder where the atomic write puts its temp file. Answers the function that undoes it.
 */
function blockWrite(file: string): () => void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  fs.mkdirSync(path.join(temp, 'blocker'), { recursive: true });
  return () => fs.rmSync(temp, { recursive: true });
}

it('retries only the part of a flush the store did not take', async () => {
  const dir = makeTempDir();
  store = await openStore(dir, 'write', { databaseUrl: undefined });
  const errors: string[] = [];
  const recorder = new ViewRecorder(store.analytics, 'UTC', { error: (_o, message) => errors.push(message) }, store.counters);
  const [blocked, free] = idsInTwoBuckets();
  const unblockDay = blockWrite(path.join(dir, 'analytics', 'day', `${DAY}.json`));
  const unblockTotal = blockWrite(bucketFile(dir, 'views', bucketOf('views', blocked)));

  for (let i = 0; i < 3; i++) recorder.record(view(blocked), AT);
  for (let i = 0; i < 2; i++) recorder.record(view(free), AT);
  await recorder.flush();
  expect(errors).toEqual([
    'page views not stored yet; retrying at the next flush',
    "articles' view totals not stored yet; retrying at the next flush",
  ]);
  // The minute and hour files and the free article's total are stored; the day file and the blocked total are not.
  expect(await store.analytics.listViews('minute', 'section', '', '\uffff')).toEqual([
    { grain: 'minute', start: '2030-01-15T10:30Z', dim: 'section', key: 'world', views: 5 },
  ]);
  expect(await store.analytics.listViews('day', 'section', '', '\uffff')).toEqual([]);
  expect((await store.counters.get(free)).views).toBe(2);
  expect((await store.counters.get(blocked)).views).toBe(0);

  unblockDay();
  unblockTotal();
  await recorder.stop();
  await store.close();

  // What the files say, read by a new store: every count once.
  store = await openStore(dir, 'read', { databaseUrl: undefined });
  const section = (grain: 'minute' | 'hour' | 'day') => store!.analytics.listViews(grain, 'section', '', '\uffff');
  expect((await section('minute')).map((c) => c.views)).toEqual([5]);
  expect((await section('hour')).map((c) => c.views)).toEqual([5]);
  expect(await section('day')).toEqual([{ grain: 'day', start: DAY, dim: 'section', key: 'world', views: 5 }]);
  const articles = await store.analytics.listViews('day', 'article', '', '\uffff');
  expect(Object.fromEntries(articles.map((c) => [c.key, c.views]))).toEqual({ [blocked]: 3, [free]: 2 });
  expect((await store.counters.get(blocked)).views).toBe(3);
  expect((await store.counters.get(free)).views).toBe(2);
});
