/**
 * Issue 14 on the real built server: no silent overwrites (version, ETag, If-Match, 409), revisions
 * and restore, the trash (restore brings back slug, comments and votes; purge), and corrections
 * (article page, JSON-LD dateModified, /corrections).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article, Correction } from '../../src/schemas/article.ts';
import type { Revision, RevisionSummary, TrashItem } from '../../src/schemas/revision.ts';
import { TestClient, adminClient, createArticle, expectError, read, startApiServer, waitFor } from './support.ts';

let server: TestServer;
let admin: TestClient;
let otherAdmin: TestClient;
let reader: TestClient;

async function page(publicPath: string): Promise<{ status: number; text: string }> {
  const response = await fetch(new URL(publicPath, server.url), { redirect: 'manual' });
  return { status: response.status, text: await response.text() };
}

function putWith(client: TestClient, id: string, json: unknown, headers: Record<string, string> = {}) {
  return client.request('PUT', `/api/articles/${id}`, { json, headers });
}

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  otherAdmin = await adminClient(server);
  reader = new TestClient(server.url);
});

beforeEach(() => {
  onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-4000)}`));
});

afterAll(async () => {
  await server?.stop();
});

describe('versions and conflicts', () => {
  it('GET answers version and an ETag; each save bumps both', async () => {
    const created = await createArticle(admin, { title: 'Versioned piece' });
    expect(created.version).toBe(1);
    const got = await admin.get(`/api/articles/${created.id}`);
    expect(got.headers.get('etag')).toBe('"1"');
    expect(((await got.json()) as Article).version).toBe(1);
    const saved = await putWith(admin, created.id, { dek: 'First dek' });
    expect(saved.status).toBe(200);
    expect(saved.headers.get('etag')).toBe('"2"');
    expect(((await saved.json()) as Article).version).toBe(2);
  });

  it('a stale If-Match answers 409 with the current article and who changed it, and changes nothing', async () => {
    const created = await createArticle(admin, { title: 'Two editors', bodyHtml: '<p>Original.</p>' });
    // Both editors open version 1; the other one saves first.
    const first = await putWith(otherAdmin, created.id, { bodyHtml: '<p>Their words.</p>' }, { 'If-Match': '"1"' });
    expect(first.status).toBe(200);
    const stale = await putWith(admin, created.id, { bodyHtml: '<p>My words.</p>' }, { 'If-Match': '"1"' });
    const body = (await expectError(stale, 409, /changed by admin/)) as unknown as {
      current: Article;
      changedBy: string;
      changedAt: string;
    };
    expect(stale.headers.get('etag')).toBe('"2"');
    expect(body.current).toMatchObject({ id: created.id, version: 2, bodyHtml: '<p>Their words.</p>' });
    expect(body.changedBy).toBe('admin');
    expect(typeof body.changedAt).toBe('string');
    const { body: now } = await read<Article>(await admin.get(`/api/articles/${created.id}`));
    expect(now.bodyHtml).toBe('<p>Their words.</p>');
    expect(now.version).toBe(2);
  });

  it('a stale `version` in the body answers 409 too; the current one saves', async () => {
    const created = await createArticle(admin, { title: 'Body version' });
    await putWith(admin, created.id, { dek: 'v2' });
    await expectError(await putWith(admin, created.id, { dek: 'stale', version: 1 }), 409);
    const ok = await putWith(admin, created.id, { dek: 'fresh', version: 2 });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Article).dek).toBe('fresh');
  });

  it('concurrent saves from the same version: exactly one wins, the others get 409', async () => {
    const created = await createArticle(admin, { title: 'Race' });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => putWith(i % 2 ? admin : otherAdmin, created.id, { title: `Race ${i}` }, { 'If-Match': '"1"' })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    const { body } = await read<Article>(await admin.get(`/api/articles/${created.id}`));
    expect(body.version).toBe(2);
  });

  it("a PUT without a version keeps today's behaviour (last write wins), and a bad If-Match is a 400", async () => {
    const created = await createArticle(admin, { title: 'Unversioned' });
    await putWith(admin, created.id, { dek: 'one' });
    const ok = await putWith(admin, created.id, { dek: 'two' });
    expect(ok.status).toBe(200);
    await expectError(await putWith(admin, created.id, { dek: 'x' }, { 'If-Match': 'banana' }), 400);
  });
});

describe('revisions', () => {
  it('every save stores a revision with who, when and which fields changed; restore is a new save', async () => {
    const created = await createArticle(admin, { title: 'Revised story', bodyHtml: '<p>First draft.</p>' });
    await putWith(admin, created.id, { bodyHtml: '<p>Second draft.</p>', dek: 'A dek' });
    await putWith(admin, created.id, { title: 'Revised story, final' });

    const { status, body: list } = await read<RevisionSummary[]>(await admin.get(`/api/articles/${created.id}/revisions`));
    expect(status).toBe(200);
    expect(list.map((r) => r.rev)).toEqual([3, 2, 1]);
    expect(list[0]).toMatchObject({ by: 'admin', fields: ['title'], autosave: false });
    expect(list[1]!.fields.sort()).toEqual(['bodyHtml', 'dek']);
    expect(list[0]).not.toHaveProperty('article');

    const { body: first } = await read<Revision>(await admin.get(`/api/articles/${created.id}/revisions/1`));
    expect(first.article.bodyHtml).toBe('<p>First draft.</p>');

    const restored = await admin.post(`/api/articles/${created.id}/revisions/1/restore`);
    expect(restored.status).toBe(200);
    const article = (await restored.json()) as Article;
    expect(article).toMatchObject({ version: 4, title: 'Revised story', bodyHtml: '<p>First draft.</p>' });
    expect(article.dek).toBeUndefined();
    const { body: after } = await read<RevisionSummary[]>(await admin.get(`/api/articles/${created.id}/revisions`));
    expect(after[0]).toMatchObject({ rev: 4, restoredFrom: 1 });
    expect(after[0]!.fields.sort()).toEqual(['bodyHtml', 'dek', 'title']);
  });

  it('a restore with a stale If-Match answers 409; unknown revisions 404; readers 401', async () => {
    const created = await createArticle(admin, { title: 'Restore guard' });
    await putWith(admin, created.id, { dek: 'changed' });
    const stale = await admin.request('POST', `/api/articles/${created.id}/revisions/1/restore`, { headers: { 'If-Match': '"1"' } });
    await expectError(stale, 409);
    await expectError(await admin.get(`/api/articles/${created.id}/revisions/99`), 404);
    await expectError(await admin.get(`/api/articles/${created.id}/revisions/abc`), 400);
    await expectError(await reader.get(`/api/articles/${created.id}/revisions`), 401);
  });

  it('autosaves are coalesced into one revision and never publish', async () => {
    const created = await createArticle(admin, { title: 'Autosaved draft' });
    for (const word of ['one', 'two', 'three']) {
      const { body } = await read<Article>(await admin.get(`/api/articles/${created.id}`));
      const saved = await putWith(admin, created.id, { bodyHtml: `<p>${word}</p>`, autosave: true, version: body.version });
      expect(saved.status).toBe(200);
    }
    const { body: list } = await read<RevisionSummary[]>(await admin.get(`/api/articles/${created.id}/revisions`));
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({
      rev: 2,
      version: 4,
      autosave: true,
      fields: ['bodyHtml', 'readingTime'].filter((f) => list[0]!.fields.includes(f)),
    });
    const { body: latest } = await read<Revision>(await admin.get(`/api/articles/${created.id}/revisions/2`));
    expect(latest.article.bodyHtml).toBe('<p>three</p>');
    await expectError(await putWith(admin, created.id, { status: 'published', autosave: true }), 400);
    const { body: still } = await read<Article>(await admin.get(`/api/articles/${created.id}`));
    expect(still.status).toBe('draft');
  });
});

describe('trash', () => {
  it('delete moves to the trash (204, readers see it gone); restore brings back slug, comments and votes', async () => {
    const created = await createArticle(admin, { title: 'Trash me', status: 'published', section: 'tech' });
    const comment = await reader.post(`/api/articles/${created.id}/comments`, {
      authorName: 'Reader',
      authorEmail: 'r@example.com',
      content: 'Kept through the trash.',
    });
    expect(comment.status).toBe(201);
    expect((await reader.post(`/api/articles/${created.id}/like`)).status).toBe(200);
    await waitFor('the article page', async () => (await page(`/article/${created.slug}`)).status === 200);

    expect((await admin.delete(`/api/articles/${created.id}`)).status).toBe(204);
    await expectError(await reader.get(`/api/articles/${created.id}`), 404);
    await expectError(await admin.get(`/api/articles/${created.id}`), 404);
    await waitFor('the page to be removed', async () => (await page(`/article/${created.slug}`)).status === 404);

    const { body: trash } = await read<TrashItem[]>(await admin.get('/api/trash'));
    const item = trash.find((t) => t.id === created.id)!;
    expect(item).toMatchObject({ slug: created.slug, title: 'Trash me', deletedBy: 'admin' });
    expect(Date.parse(item.purgeAt) - Date.parse(item.deletedAt)).toBe(30 * 24 * 3600 * 1000);

    // The slug stays reserved while in the trash.
    const twin = await createArticle(admin, { title: 'Trash me' });
    expect(twin.slug).toBe(`${created.slug}-2`);

    const restored = await admin.post(`/api/trash/${created.id}/restore`);
    expect(restored.status).toBe(200);
    expect((await restored.json()) as Article).toMatchObject({ id: created.id, slug: created.slug, status: 'published', likes: 1 });
    const { body: comments } = await read<{ content: string }[]>(await reader.get(`/api/articles/${created.id}/comments`));
    expect(comments.map((c) => c.content)).toEqual(['Kept through the trash.']);
    expect((await read<TrashItem[]>(await admin.get('/api/trash'))).body.some((t) => t.id === created.id)).toBe(false);
    await waitFor('the page to come back', async () => (await page(`/article/${created.slug}`)).status === 200);
  });

  it('DELETE /api/trash/{id} purges now: comments and the slug go with it', async () => {
    const created = await createArticle(admin, { title: 'Purge me now', status: 'published' });
    await reader.post(`/api/articles/${created.id}/comments`, {
      authorName: 'Reader',
      authorEmail: 'r@example.com',
      content: 'Gone soon.',
    });
    expect((await admin.delete(`/api/articles/${created.id}`)).status).toBe(204);
    expect((await admin.delete(`/api/trash/${created.id}`)).status).toBe(204);
    await expectError(await admin.post(`/api/trash/${created.id}/restore`), 404);
    await expectError(await admin.delete(`/api/trash/${created.id}`), 404);
    const { body: comments } = await read<{ articleId: string }[]>(await admin.get('/api/admin/comments?limit=100'));
    expect(JSON.stringify(comments)).not.toContain(created.id);
    const again = await createArticle(admin, { title: 'Purge me now' });
    expect(again.slug).toBe(created.slug);
    const trashDir = path.join(server.dataDir, 'trash');
    const files = fs.existsSync(trashDir) ? fs.readdirSync(trashDir, { recursive: true }).map(String) : [];
    expect(files.some((f) => f.includes(created.id))).toBe(false);
  });

  it('readers and signed-out callers cannot see or use the trash', async () => {
    await expectError(await reader.get('/api/trash'), 401);
    await expectError(await reader.post('/api/trash/x/restore'), 401);
  });
});

describe('corrections', () => {
  it('a correction shows on the article page, moves dateModified in the JSON-LD and lists on /corrections, newest first', async () => {
    const created = await createArticle(admin, { title: 'Budget figures', status: 'published', section: 'business' });
    const other = await createArticle(admin, { title: 'Match report', status: 'published', section: 'sports' });
    const first = await admin.post(`/api/articles/${created.id}/corrections`, { text: 'An earlier version misstated the deficit.' });
    expect(first.status).toBe(201);
    const correction = (await first.json()) as Correction;
    expect(correction).toMatchObject({ text: 'An earlier version misstated the deficit.', by: 'admin' });
    const second = await admin.post(`/api/articles/${other.id}/corrections`, { text: 'The final score was 2-1.' });
    expect(second.status).toBe(201);
    const secondCorrection = (await second.json()) as Correction;

    const article = await waitFor('the corrected article page', async () => {
      const { text } = await page(`/article/${created.slug}`);
      return text.includes('misstated the deficit') && text;
    });
    const jsonLd = JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/s.exec(article)![1]!) as { dateModified: string };
    expect(jsonLd.dateModified).toBe(correction.at);

    const list = await waitFor('/corrections to list both', async () => {
      const { status, text } = await page('/corrections');
      return status === 200 && text.includes('The final score was 2-1.') && text.includes('misstated the deficit') && text;
    });
    expect(list.indexOf('The final score was 2-1.')).toBeLessThan(list.indexOf('misstated the deficit'));
    expect(list).toContain(`/article/${created.slug}`);
    expect(secondCorrection.at >= correction.at).toBe(true);

    const { body: listed } = await read<Correction[]>(await reader.get(`/api/articles/${created.id}/corrections`));
    expect(listed.map((c) => c.text)).toEqual(['An earlier version misstated the deficit.']);
  });

  it('corrections are for published articles; empty text is a 400; readers cannot add one', async () => {
    const draft = await createArticle(admin, { title: 'Not yet out' });
    await expectError(await admin.post(`/api/articles/${draft.id}/corrections`, { text: 'Nope' }), 409);
    const published = await createArticle(admin, { title: 'Out now', status: 'published' });
    const bad = await expectError(await admin.post(`/api/articles/${published.id}/corrections`, { text: '  ' }), 400);
    expect(bad.issues?.[0]?.path).toEqual(['text']);
    await expectError(await reader.post(`/api/articles/${published.id}/corrections`, { text: 'Sneaky' }), 401);
  });
});
