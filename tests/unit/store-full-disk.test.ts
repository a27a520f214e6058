/**
 * The lowdb store on a real full disk (a tmpfs filled to the last byte): every write is refused with
 * ENOSPC and leaves the store as its files are, in memory as on disk (a read-only open of the same
 * folder answers the same), with no temp file or torn line left; once space is freed the same writes
 * succeed without reopening. PostgreSQL keeps no files in DATA_DIR's store: lowdb only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { bucketOf } from '../../src/store/lowdb/layout.ts';
import { storeJsonFiles } from '../../src/store/lowdb/inspect.ts';
import type { Comment } from '../../src/schemas/comment.ts';
import type { BriefingRun } from '../../src/schemas/newsletter.ts';
import { asRoot, fillDisk, leftoverTempFiles, mountTmpfs } from '../helpers/tmpfs.ts';
import { articleRecord, closeQuietly } from './support.ts';

const PAGE = { offset: 0, limit: 100 };
const DAY = '2030-01-01';

/** Everything the store answers that a refused write could have changed. */
async function viewOf(store: Store) {
  const articles = await store.articles.list({}, PAGE);
  return {
    version: await store.articles.version(),
    articles: articles.map((a) => ({ id: a.id, title: a.title, status: a.status, version: a.version, body: a.bodyHtml })),
    bySlug: (await store.articles.getBySlug('lead'))?.title,
    found: (await store.articles.search('kestrel', {}, PAGE)).total,
    due: (await store.articles.listDue('2031-01-01T00:00:00.000Z')).map((a) => a.id),
    counters: await store.counters.get('lead'),
    vote: await store.counters.visitorVote('lead', 'visitor-new'),
    comments: (await store.comments.list({}, PAGE)).map((c) => `${c.id}:${c.status}`),
    subscribers: (await store.subscribers.listFiltered({}, PAGE)).items.map((s) => `${s.email}:${s.unsubscribedAt ?? ''}`),
    session: await store.sessions.get('session-new'),
    users: (await store.users.count()) + ((await store.users.getByUsername('new-editor')) ? 100 : 0),
    sources: (await store.sources.list()).map((s) => `${s.id}:${s.enabled}`),
    meta: await store.meta.get('step'),
    runs: (await store.briefings.runsFor(DAY)).map((r) => r.id),
    trash: (await store.trash.list()).map((t) => t.article.id),
    audit: (await store.audit.list(PAGE)).total,
  };
}

/** What the files say: a read-only open of the same folder. */
async function viewOnDisk(dir: string) {
  const disk = await openStore(dir, 'read');
  try {
    return await viewOf(disk);
  } finally {
    await disk.close();
  }
}

function comment(id: string, content = 'A comment'): Comment {
  return {
    id,
    articleId: 'lead',
    authorName: 'Reader',
    authorEmail: 'r@x.io',
    content,
    status: 'visible',
    createdAt: '2030-01-02T00:00:00.000Z',
  };
}

/** Two comment ids whose records share a bucket file (so their writes share one disk write). */
function idsSharingABucket(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const id = `shared-${i}`;
    const other = seen.get(bucketOf('comments', id));
    if (other) return [other, id];
    seen.set(bucketOf('comments', id), id);
  }
}

const run: BriefingRun = {
  id: 'run-new',
  date: DAY,
  forced: false,
  trigger: 'schedule',
  status: 'sending',
  startedAt: `${DAY}T07:00:00.000Z`,
  since: `${DAY}T00:00:00.000Z`,
  subject: 'Briefing',
  articleIds: [],
  recipients: 0,
  sent: 0,
  failed: 0,
  unknown: 0,
};

/** Every write the test makes, each once; run on a full disk (all refused) and then with space (all stored). */
function writes(store: Store): Record<string, () => Promise<unknown>> {
  const [first, second] = idsSharingABucket();
  return {
    save: () => store.articles.replaceIfVersion({ ...articleRecord({ id: 'lead', slug: 'lead' }), title: 'The kestrel returns' }, 1),
    saveTwiceAtOnce: () =>
      Promise.allSettled([
        store.articles.replace({ ...articleRecord({ id: 'second', slug: 'second' }), title: 'Kestrel one' }),
        store.articles.replace({ ...articleRecord({ id: 'second', slug: 'second' }), title: 'Kestrel two' }),
      ]).then((results) => {
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      }),
    insert: () => store.articles.insert(articleRecord({ id: 'new', slug: 'new', title: 'A new kestrel' })),
    delete: () => store.articles.delete('doomed'),
    publish: () => store.articles.publishIfScheduled('planned', '2030-06-01T00:00:00.000Z'),
    vote: () => store.counters.vote('lead', 'visitor-new', 'like'),
    adjust: () => store.counters.adjust('lead', 'dislike', 5),
    views: () => store.counters.incrementViews('lead'),
    comment: () => store.comments.insert(comment('c-new')),
    commentsSharingAWrite: () => Promise.all([store.comments.insert(comment(first)), store.comments.insert(comment(second))]),
    hide: () => store.comments.setStatus('c-old', 'hidden'),
    subscribe: () =>
      store.subscribers.upsert({ id: 'n-new', email: 'new@x.io', token: 'token-new-xxxxxxxxxxxx', createdAt: `${DAY}T00:00:00.000Z` }),
    unsubscribe: () => store.subscribers.unsubscribe('token-old-xxxxxxxxxxxx', `${DAY}T00:00:00.000Z`),
    session: () =>
      store.sessions.insert({ id: 'session-new', userId: 'u1', expiresAt: '2099-01-01T00:00:00.000Z', createdAt: `${DAY}T00:00:00.000Z` }),
    user: () =>
      store.users.upsert({ id: 'u-new', username: 'new-editor', passwordHash: 'h', createdAt: `${DAY}T00:00:00.000Z`, role: 'editor' }),
    source: () => store.sources.update('s1', { enabled: false }),
    meta: () => store.meta.set('step', 2),
    briefing: () => store.briefings.startRun(run),
    trash: () =>
      store.trash.put({ article: articleRecord({ id: 'gone', slug: 'gone' }), deletedAt: `${DAY}T00:00:00.000Z`, deletedBy: 'admin' }),
    revision: () =>
      store.revisions.save({
        articleId: 'lead',
        rev: 9,
        version: 9,
        at: `${DAY}T00:00:00.000Z`,
        by: 'admin',
        fields: ['title'],
        autosave: false,
        article: articleRecord({ id: 'lead', slug: 'lead' }),
      }),
  };
}

describe.skipIf(!asRoot)('the lowdb store on a full disk (needs root: mounts a tmpfs)', () => {
  let mount: { dir: string; unmount: () => void };
  let dir: string;
  let store: Store;

  beforeAll(async () => {
    mount = mountTmpfs(4);
    dir = path.join(mount.dir, 'data');
    store = await openStore(dir, 'write');
    await store.articles.insert(
      articleRecord({ id: 'lead', slug: 'lead', title: 'The lead', status: 'published', bodyHtml: '<p>Old body.</p>' }),
    );
    await store.articles.insert(articleRecord({ id: 'second', slug: 'second', title: 'The second' }));
    await store.articles.insert(articleRecord({ id: 'doomed', slug: 'doomed', title: 'Soon deleted' }));
    await store.articles.insert(
      articleRecord({ id: 'planned', slug: 'planned', title: 'Planned', status: 'scheduled', scheduledFor: '2030-05-01T00:00:00.000Z' }),
    );
    await store.counters.vote('lead', 'visitor-old', 'like');
    await store.comments.insert(comment('c-old', 'An old comment'));
    await store.subscribers.upsert({
      id: 'n-old',
      email: 'old@x.io',
      token: 'token-old-xxxxxxxxxxxx',
      createdAt: '2029-01-01T00:00:00.000Z',
    });
    await store.users.upsert({ id: 'u1', username: 'admin', passwordHash: 'h', createdAt: '2029-01-01T00:00:00.000Z', role: 'admin' });
    await store.sources.insert({
      id: 's1',
      name: 'Wire',
      type: 'rss',
      url: 'https://w.example/rss',
      section: 'world',
      enabled: true,
      createdAt: '2029-01-01T00:00:00.000Z',
    });
    await store.meta.set('step', 1);
    await store.audit.append({
      id: 'a-old',
      at: `${DAY}T00:00:00.000Z`,
      actor: null,
      action: 'article.publish',
      target: { type: 'article', id: 'lead' },
    });
  });

  afterAll(async () => {
    await closeQuietly(store);
    mount?.unmount();
  });

  it('refuses every write with ENOSPC and keeps memory equal to the files, then stores them all once space is freed', async () => {
    const before = await viewOf(store);
    expect(await viewOnDisk(dir)).toEqual(before);

    const free = fillDisk(mount.dir);
    for (const [name, write] of Object.entries(writes(store))) {
      await expect(write(), name).rejects.toMatchObject({ code: 'ENOSPC' });
      // Memory is what the files hold: the refused change is nowhere, in any index (search, slug, due list, tallies).
      expect(await viewOf(store), name).toEqual(before);
    }
    expect(await viewOnDisk(dir)).toEqual(before);
    expect(leftoverTempFiles(dir)).toEqual([]);
    for (const file of storeJsonFiles(dir)) expect(() => JSON.parse(fs.readFileSync(file, 'utf8')), file).not.toThrow();

    // An append-only log on a full disk: appends go in while the segment's last page has room, then are
    // refused, and the segment ends with the last acknowledged line, whole.
    let acknowledged = before.audit;
    for (let i = 0; i < 200; i++) {
      const appended = await store.audit
        .append({
          id: `a-${i}`,
          at: `${DAY}T00:00:00.000Z`,
          actor: null,
          action: 'article.publish',
          target: { type: 'article', id: 'lead' },
        })
        .then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            expect(error.code).toBe('ENOSPC');
            return false;
          },
        );
      if (!appended) break;
      acknowledged++;
    }
    expect(acknowledged).toBeLessThan(before.audit + 200);
    const segment = fs.readFileSync(path.join(dir, 'audit', `${DAY.slice(0, 7)}.jsonl`), 'utf8');
    expect(segment.endsWith('\n')).toBe(true);
    for (const line of segment.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    expect((await store.audit.list(PAGE)).total).toBe(acknowledged);

    free();
    for (const [name, write] of Object.entries(writes(store))) await expect(write(), name).resolves.not.toThrow();
    const after = await viewOf(store);
    expect(after).toMatchObject({
      bySlug: 'The kestrel returns',
      found: 3,
      due: [],
      counters: { likes: 2, dislikes: 5, views: 1 },
      vote: 'like',
      session: { id: 'session-new' },
      meta: 2,
      runs: ['run-new'],
      trash: ['gone'],
    });
    expect(after.articles.map((a) => a.id).sort()).toEqual(['lead', 'new', 'planned', 'second']);
    expect(after.comments).toHaveLength(4);
    expect(after.subscribers).toHaveLength(2);
    expect(await viewOnDisk(dir)).toEqual(after);

    // And a reopen (a restart) finds exactly that.
    await store.close();
    store = await openStore(dir, 'write');
    expect(await viewOf(store)).toEqual(after);
  });
});
