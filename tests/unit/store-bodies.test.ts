/** Article bodies stay on disk (read on demand) and the text index lives in a worker thread: what readers see must not change. */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { articleFile } from '../../src/store/lowdb/layout.ts';
import { ArticleBodies, parseArticleWithoutBody } from '../../src/store/lowdb/article-bodies.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';

let store: Store | undefined;

afterEach(async () => {
  await closeQuietly(store);
  store = undefined;
});

async function seeded(count: number): Promise<{ dir: string; ids: string[] }> {
  const dir = makeTempDir();
  const first = await openStore(dir);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const article = articleRecord({ bodyHtml: `<p>Body number ${i} about the harbour ${i % 2 ? 'lighthouse' : 'ferry'}.</p>` });
    await first.articles.insert(article);
    ids.push(article.id);
  }
  await first.close();
  return { dir, ids };
}

describe('bodies on disk', () => {
  it('parses an article file without its body, whatever the body and the other fields hold', () => {
    const bodies = [
      '<p>plain</p>',
      '',
      'ends with a backslash \\',
      'quotes "inside" and \\" mixed',
      '"bodyHtml":"x"',
      'üñîçødé ✓ \u2028 line',
      '\\"',
    ];
    const titles = ['A title', 'A "bodyHtml":"tricky" title', 'back\\slash'];
    for (const bodyHtml of bodies) {
      for (const title of titles) {
        const record = articleRecord({ title, bodyHtml, dek: 'has "quotes" too' });
        const bytes = Buffer.from(JSON.stringify(record));
        expect(parseArticleWithoutBody(bytes), `${title} / ${bodyHtml}`).toEqual({ ...record, bodyHtml: '' });
      }
    }
    // The body first in the file, or a field order of another writer: still only the body goes.
    const { bodyHtml: _b, ...rest } = articleRecord({ bodyHtml: 'x' });
    expect(parseArticleWithoutBody(Buffer.from(JSON.stringify({ bodyHtml: 'first "one"', ...rest })))).toEqual({ ...rest, bodyHtml: '' });
  });

  it('holds no body string in memory after a start, yet every read answers the body from its file', async () => {
    const { dir, ids } = await seeded(5);
    store = await openStore(dir);
    const listed = await store.articles.list({ statuses: ['published'] }, { offset: 0, limit: 10 });
    expect(listed).toHaveLength(5);
    for (const record of listed) {
      // An accessor, not a value: the string is read from the article's file when asked for.
      expect(typeof Object.getOwnPropertyDescriptor(record, 'bodyHtml')?.get).toBe('function');
      const onDisk = JSON.parse(fs.readFileSync(articleFile(dir, record.id), 'utf8')) as { bodyHtml: string };
      expect(record.bodyHtml).toBe(onDisk.bodyHtml);
      expect(JSON.parse(JSON.stringify(record)).bodyHtml).toBe(onDisk.bodyHtml);
      expect(structuredClone(record).bodyHtml).toBe(onDisk.bodyHtml);
    }
    expect((await store.articles.get(ids[3]!))!.bodyHtml).toContain('Body number 3');
  });

  it('answers a new body at once, before its file is written, and keeps the old body in a record read before', async () => {
    const { dir, ids } = await seeded(2);
    store = await openStore(dir);
    const before = (await store.articles.get(ids[0]!))!;
    const saving = store.articles.replace({ ...before, bodyHtml: '<p>Rewritten body.</p>' });
    // The write is in flight: the file still has the old body, the store answers the new one.
    expect((await store.articles.get(ids[0]!))!.bodyHtml).toBe('<p>Rewritten body.</p>');
    await saving;
    expect(before.bodyHtml).toContain('Body number 0');
    expect((await store.articles.get(ids[0]!))!.bodyHtml).toBe('<p>Rewritten body.</p>');
    await store.close();
    store = await openStore(dir);
    expect((await store.articles.get(ids[0]!))!.bodyHtml).toBe('<p>Rewritten body.</p>');
  });

  it('a read asking for the body has it before answering, and a write made meanwhile wins over the file read', async () => {
    const { dir, ids } = await seeded(2);
    store = await openStore(dir);
    // Read ahead (no synchronous read on access): the body answers though its file is gone.
    const read = (await store.articles.getBySlug((await store.articles.get(ids[1]!))!.slug, { body: true }))!;
    fs.rmSync(articleFile(dir, ids[1]!));
    expect(read.bodyHtml).toContain('Body number 1');
    // A body written while the file read is in flight (its bytes are the old file's): the read is not remembered.
    const bodies = new ArticleBodies(dir);
    const record = bodies.detach(JSON.parse(fs.readFileSync(articleFile(dir, ids[0]!), 'utf8')) as ArticleRecord);
    const loading = bodies.load(ids[0]!);
    bodies.hold({ ...record, bodyHtml: '<p>Written meanwhile.</p>' });
    bodies.written(ids[0]!);
    await loading;
    expect(record.bodyHtml).toBe('<p>Written meanwhile.</p>');
  });

  it('a conflict answer carries the stored body, and a deleted record keeps the body it had', async () => {
    const { dir, ids } = await seeded(1);
    store = await openStore(dir);
    const current = (await store.articles.get(ids[0]!))!;
    const result = await store.articles.replaceIfVersion({ ...current, bodyHtml: '<p>Stale.</p>' }, (current.version ?? 1) + 5);
    expect(result && 'conflict' in result ? result.conflict.bodyHtml : undefined).toContain('Body number 0');
    await store.articles.delete(ids[0]!);
    expect(current.bodyHtml).toContain('Body number 0');
    expect(await store.articles.get(ids[0]!)).toBeUndefined();
  });
});

describe('text index in a worker thread', () => {
  it('indexes the articles on disk at start and every write after, including writes made while it builds', async () => {
    const { dir, ids } = await seeded(6);
    store = await openStore(dir);
    // Written before the worker has finished reading the files.
    const fresh = articleRecord({ title: 'Quayside regatta', bodyHtml: '<p>Sailing boats crowd the quay.</p>' });
    await store.articles.insert(fresh);
    const old = (await store.articles.get(ids[1]!))!;
    await store.articles.replace({ ...old, bodyHtml: '<p>Now about a windmill.</p>' });
    await store.articles.delete(ids[3]!);

    const lighthouse = await store.articles.search('lighthouse', {}, { offset: 0, limit: 10 });
    expect(lighthouse.items.map((a) => a.id).sort()).toEqual([ids[5]!].sort());
    expect((await store.articles.search('regatta', {}, { offset: 0, limit: 10 })).items.map((a) => a.id)).toEqual([fresh.id]);
    expect((await store.articles.search('windmill', {}, { offset: 0, limit: 10 })).items.map((a) => a.id)).toEqual([ids[1]!]);
    expect((await store.articles.search('ferry', {}, { offset: 0, limit: 10 })).total).toBe(3);
    const stats = await (store.articles as unknown as { textReady(): Promise<{ inWorker: boolean; documents: number }> }).textReady();
    expect(stats.inWorker).toBe(true);
  });

  it('a writer opened with lazyTextIndex (npm run rebuild) builds it on the first search, with the writes made before', async () => {
    const { dir, ids } = await seeded(6);
    store = await openStore(dir, 'write', { lazyTextIndex: true });
    const fresh = articleRecord({ title: 'Quayside regatta', bodyHtml: '<p>Sailing boats crowd the quay.</p>' });
    await store.articles.insert(fresh);
    const old = (await store.articles.get(ids[1]!))!;
    await store.articles.replace({ ...old, bodyHtml: '<p>Now about a windmill.</p>' });
    await store.articles.delete(ids[3]!);

    expect((await store.articles.search('regatta', {}, { offset: 0, limit: 10 })).items.map((a) => a.id)).toEqual([fresh.id]);
    expect((await store.articles.search('windmill', {}, { offset: 0, limit: 10 })).items.map((a) => a.id)).toEqual([ids[1]!]);
    expect((await store.articles.search('ferry', {}, { offset: 0, limit: 10 })).total).toBe(3);
  });
});

describe('date ranges', () => {
  it('cuts a published date range out of the sorted listing, the same articles a scan finds', async () => {
    const dir = makeTempDir();
    store = await openStore(dir);
    const inserted = [];
    for (let i = 0; i < 60; i++) {
      const at = new Date(Date.UTC(2026, 9, 1) + i * 43_200_000).toISOString();
      const article = articleRecord({
        id: `range-${i}`,
        slug: `range-${i}`,
        section: i % 2 ? 'world' : 'tech',
        publishedAt: at,
        createdAt: at,
        updatedAt: at,
        status: i % 7 === 3 ? 'draft' : 'published',
      });
      await store.articles.insert(article);
      inserted.push(article);
    }
    const ranges: [string | undefined, string | undefined][] = [
      ['2026-10-05', '2026-10-09'],
      ['2026-10-05T12:00:00.000Z', undefined],
      [undefined, '2026-10-02'],
      ['2027-01-01', undefined],
      ['2026-10-10T00:00:00.000Z', '2026-10-10T11:59:59.999Z'],
    ];
    for (const [dateFrom, dateTo] of ranges) {
      for (const section of [undefined, 'world'] as const) {
        const expected = inserted
          .filter((a) => a.status === 'published' && (!section || a.section === section))
          .filter(
            (a) =>
              (!dateFrom || a.publishedAt! >= (dateFrom.length === 10 ? `${dateFrom}T00:00:00.000Z` : dateFrom)) &&
              (!dateTo || a.publishedAt! <= (dateTo.length === 10 ? `${dateTo}T23:59:59.999Z` : dateTo)),
          )
          .map((a) => a.id)
          .reverse();
        const filter = { statuses: ['published' as const], section, dateFrom, dateTo };
        expect(
          (await store.articles.list(filter, { offset: 0, limit: 100 })).map((a) => a.id),
          `${dateFrom}..${dateTo} ${section}`,
        ).toEqual(expected);
        expect(await store.articles.count(filter)).toBe(expected.length);
        expect((await store.articles.list(filter, { offset: 2, limit: 3 })).map((a) => a.id)).toEqual(expected.slice(2, 5));
      }
    }
  });
});
