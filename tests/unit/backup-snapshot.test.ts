/**
 * The lowdb snapshot a backup takes while the store keeps writing: one point in time (a write done
 * before another is in it whenever the later one is), every write done before it started is in it,
 * and writes are held only for the short second pass.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { snapshotDataDir } from '../../src/store/backup.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await closeQuietly(store);
});

describe('the lowdb snapshot under writes', () => {
  it('is one point in time while writes go on, and holds every write done before it started', async () => {
    const dir = makeTempDir('meridian-snapshot-');
    const store = await openStore(dir, 'write', { databaseUrl: undefined });
    opened.push(store);
    const article = articleRecord({ slug: 'written-all-along' });
    await store.articles.insert(article);
    // Enough files that the first pass takes a while, with writes landing during it.
    for (let shard = 0; shard < 40; shard++) {
      const folder = path.join(dir, 'revisions', 'zz', `filler-${shard}`);
      fs.mkdirSync(folder, { recursive: true });
      for (let n = 1; n <= 100; n++) fs.writeFileSync(path.join(folder, `${String(n).padStart(9, '0')}.json`), '{}');
    }

    // Each step: a revision file, an audit line (appended in place), then the step's number in meta.json.
    let step = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        step++;
        await store.revisions.save({
          articleId: article.id,
          rev: step,
          version: step,
          at: new Date(Date.UTC(2030, 0, 1, 0, 0, step)).toISOString(),
          by: 'u1',
          fields: ['title'],
          autosave: false,
          article,
        });
        await store.audit.append({
          id: `step-${step}`,
          at: '2030-01-01T00:00:00.000Z',
          actor: null,
          action: 'article.publish',
          target: { type: 'article', id: article.id },
        });
        await store.meta.set('step', step);
      }
    })();
    while (step < 5) await new Promise((resolve) => setTimeout(resolve, 5));
    const doneBefore = step - 1;
    const snapshot = await snapshotDataDir(dir);
    const atEnd = step;
    stop = true;
    await writer;

    expect(snapshot.heldMs).toBeDefined();
    // Open the staged copy as a store, as a restore would.
    const copy = await openStore(path.join(snapshot.dir, 'data'), 'read', { databaseUrl: undefined });
    opened.push(copy);
    const last = (await copy.meta.get<number>('step'))!;
    expect(last).toBeGreaterThanOrEqual(doneBefore);
    // Writes went on while the folder was linked: the copy is not simply the folder before or after.
    expect(atEnd).toBeGreaterThan(doneBefore + 1);
    const revisions = (await copy.revisions.list(article.id)).map((r) => r.rev).sort((a, b) => a - b);
    const audit = (await copy.audit.list({ offset: 0, limit: 100_000 })).items.map((e) => e.id);
    // Every step the copy's meta.json counts has its revision and its audit line: nothing later without what came before.
    for (let n = 1; n <= last; n++) {
      expect(revisions, `revision ${n} of ${last}`).toContain(n);
      expect(audit, `audit line ${n} of ${last}`).toContain(`step-${n}`);
    }
    // And nothing from after: at most the step in flight when writes were held.
    expect(revisions.length).toBeLessThanOrEqual(last + 1);
    expect(snapshot.files.some((f) => f.path === 'data/revisions/zz/filler-39/000000100.json')).toBe(true);
    fs.rmSync(snapshot.dir, { recursive: true, force: true });
  });

  it('leaves out the lock, the server address, temp files, uploads and the outbox', async () => {
    const dir = makeTempDir('meridian-snapshot-');
    const store = await openStore(dir, 'write', { databaseUrl: undefined });
    opened.push(store);
    fs.writeFileSync(path.join(dir, '.server.json'), '{}');
    fs.writeFileSync(path.join(dir, '.meta.json.tmp'), 'half');
    fs.mkdirSync(path.join(dir, 'tmp', 'uploads'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'tmp', 'uploads', 'x'), 'upload');
    fs.mkdirSync(path.join(dir, 'outbox'));
    fs.writeFileSync(path.join(dir, 'outbox', 'mail.eml'), 'mail');
    fs.mkdirSync(path.join(dir, 'images', 'ab'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'images', 'ab', '1200.webp'), 'image');
    const snapshot = await snapshotDataDir(dir);
    const names = snapshot.files.map((f) => f.path);
    expect(names).toContain('data/images/ab/1200.webp');
    expect(names).toContain('data/meta.json');
    expect(names.filter((n) => /\.lock$|\.server\.json$|\.tmp$|^data\/tmp\/|^data\/outbox\//.test(n))).toEqual([]);
    fs.rmSync(snapshot.dir, { recursive: true, force: true });
  });
});
