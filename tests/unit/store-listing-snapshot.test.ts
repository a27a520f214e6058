/** The listing snapshot: a clean close lets the next open skip the article files, and only an up-to-date snapshot is ever read. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { articleFile } from '../../src/store/lowdb/layout.ts';
import { LISTING_SNAPSHOT_FILE } from '../../src/store/lowdb/listing-snapshot.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';

const open: Store[] = [];

afterEach(async () => {
  for (const store of open.splice(0)) await closeQuietly(store);
});

async function openTracked(dir: string, mode?: 'read'): Promise<Store> {
  const store = await openStore(dir, mode);
  open.push(store);
  return store;
}

/** Every article as a plain value, bodies read: what readers of the store can see. */
async function everything(store: Store): Promise<ArticleRecord[]> {
  const page = await store.articles.list({}, { offset: 0, limit: 1000 });
  return page.map((record) => JSON.parse(JSON.stringify(record)) as ArticleRecord);
}

/** Edits a file behind the store's back (never done by the product): shows which source an open read. */
function retitleOnDisk(dir: string, id: string, title: string): void {
  const file = articleFile(dir, id);
  const record = JSON.parse(fs.readFileSync(file, 'utf8')) as ArticleRecord;
  fs.writeFileSync(file, JSON.stringify({ ...record, title }));
}

async function seeded(count: number): Promise<{ dir: string; ids: string[] }> {
  const dir = makeTempDir();
  const store = await openStore(dir);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const article = articleRecord({
      title: `Harbour story ${i}`,
      bodyHtml: `<p>Body ${i} with "quotes" and \\ slashes.</p>`,
      tags: [`t${i}`],
    });
    await store.articles.insert(article);
    ids.push(article.id);
  }
  await store.close();
  return { dir, ids };
}

describe('listing snapshot', () => {
  it('is written at a clean close and read by the next open instead of the article files', async () => {
    const { dir, ids } = await seeded(6);
    expect(fs.existsSync(path.join(dir, LISTING_SNAPSHOT_FILE))).toBe(true);
    // Changed behind the store's back, without a version bump: only an open that read the files sees it.
    retitleOnDisk(dir, ids[2]!, 'Edited by hand');
    const store = await openTracked(dir);
    expect((await store.articles.get(ids[2]!))?.title).toBe('Harbour story 2');
  });

  it('gives the same records, bodies included, as reading every article file', async () => {
    const { dir } = await seeded(8);
    const fromSnapshot = await everything(await openTracked(dir, 'read'));
    fs.rmSync(path.join(dir, LISTING_SNAPSHOT_FILE));
    const fromFiles = await everything(await openTracked(dir, 'read'));
    expect(fromSnapshot).toHaveLength(8);
    expect(fromSnapshot).toEqual(fromFiles);
    expect(fromSnapshot.map((r) => r.bodyHtml)).toEqual(fromFiles.map((r) => r.bodyHtml));
    expect(fromSnapshot[0]!.bodyHtml).toMatch(/^<p>Body \d with "quotes" and \\ slashes\.<\/p>$/);
  });

  it('is not read after a write that was not followed by a clean close (what a crash leaves)', async () => {
    const { dir, ids } = await seeded(4);
    const store = await openTracked(dir);
    const changed = (await store.articles.get(ids[0]!))!;
    await store.articles.replace({ ...changed, title: 'Changed before the crash' });
    await store.articles.delete(ids[1]!);
    const added = articleRecord({ title: 'Added before the crash' });
    await store.articles.insert(added);
    // The folder as a SIGKILL would leave it now: the writes acknowledged, the old snapshot still there.
    const crashed = makeTempDir();
    fs.cpSync(dir, crashed, { recursive: true });
    fs.rmSync(path.join(crashed, '.lock'), { force: true });
    expect(fs.existsSync(path.join(crashed, LISTING_SNAPSHOT_FILE))).toBe(true);
    const reopened = await openTracked(crashed);
    expect((await reopened.articles.get(ids[0]!))?.title).toBe('Changed before the crash');
    expect(await reopened.articles.get(ids[1]!)).toBeUndefined();
    expect((await reopened.articles.get(added.id))?.title).toBe('Added before the crash');
    expect(await everything(reopened)).toHaveLength(4);
  });

  it('is left alone by a read-only open and a writer that wrote nothing, and rewritten by the next clean close after writes', async () => {
    const { dir, ids } = await seeded(3);
    const file = path.join(dir, LISTING_SNAPSHOT_FILE);
    const before = fs.readFileSync(file, 'utf8');
    await (await openTracked(dir, 'read')).close();
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    // A writer that opened from it and wrote no article (a rebuild with nothing due) does not write it again.
    const mtime = fs.statSync(file).mtimeMs;
    await (await openTracked(dir)).close();
    expect(fs.statSync(file).mtimeMs).toBe(mtime);
    const writer = await openStore(dir);
    const record = (await writer.articles.get(ids[1]!))!;
    await writer.articles.replace({ ...record, title: 'Saved, then closed' });
    await writer.close();
    retitleOnDisk(dir, ids[0]!, 'Edited by hand');
    const reopened = await openTracked(dir);
    expect((await reopened.articles.get(ids[1]!))?.title).toBe('Saved, then closed');
    // Read from the new snapshot, not the files.
    expect((await reopened.articles.get(ids[0]!))?.title).toBe('Harbour story 0');
  });
});
