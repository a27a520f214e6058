/** The render thread: draws reader pages from the built bundle with the data it is handed, off the server's thread, at a lower priority. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { toArticle, toSummary } from '../../src/server/articles.ts';
import { startRenderPool, startRenderThread } from '../../src/server/publishing/render-thread.ts';
import type { ArticlePageData, SectionPageData } from '../../src/schemas/pages.ts';
import { ROOT } from '../helpers/server.ts';
import { articleRecord } from './support.ts';

const serverEntry = path.resolve(ROOT, process.env.OUT_DIR ?? 'dist', 'server/entry.mjs');
const counters = { likes: 3, dislikes: 1, views: 7 };

function articlePage(title: string, bodyHtml: string): ArticlePageData {
  const record = articleRecord({ title, slug: title.toLowerCase().replaceAll(' ', '-'), bodyHtml });
  return { article: toArticle(record, counters), url: `http://localhost:4321/article/${record.slug}` };
}

/** The nice value of each thread of this process, by thread id (field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    values.set(Number(tid), Number(fields[16]));
  }
  return values;
}

describe('render thread', () => {
  const thread = startRenderThread(serverEntry);
  afterAll(() => thread.close());

  it('draws an article page and a section page from the data it is handed', async () => {
    const data = articlePage('Drawn off the main thread', '<p>The council met on Thursday.</p>');
    const html = Buffer.from((await thread.render(`/article/${data.article!.slug}`, { route: 'article', props: data })).body).toString();
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('Drawn off the main thread');
    expect(html).toContain('The council met on Thursday.');
    // As prerendered pages carry it: the twin renders its CSP as a <meta>.
    expect(html).toContain('http-equiv="content-security-policy"');

    const cards = ['First card', 'Second card'].map((title) => toSummary(articleRecord({ title, section: 'tech' })));
    const listing: SectionPageData = {
      section: 'tech',
      title: 'Technology',
      description: 'Tech news',
      page: 1,
      totalPages: 1,
      newestArchive: false,
      articles: cards,
    };
    const page = Buffer.from((await thread.render('/section/tech', { route: 'section', props: listing })).body).toString();
    expect(page).toContain('First card');
    expect(page).toContain('Second card');
  });

  it('compresses a file into twins that decode to it, and leaves a tiny one alone', async () => {
    const body = Buffer.from(`<!DOCTYPE html><p>${'A council met on Thursday to weigh the proposal. '.repeat(200)}</p>`);
    const twins = await thread.compress('/srv/client/article/x/index.html', body);
    expect(twins.br && zlib.brotliDecompressSync(twins.br).equals(body)).toBe(true);
    expect(twins.gzip && zlib.gunzipSync(twins.gzip).equals(body)).toBe(true);
    expect(twins.br!.byteLength).toBeLessThan(body.byteLength / 4);
    expect(await thread.compress('/srv/client/robots.txt', Buffer.from('User-agent: *\n'))).toEqual({});
  });

  it('given the file a page goes to, says whether it holds the page already, or makes the twins of the new one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'render-thread-'));
    try {
      const file = path.join(dir, 'article/prepared/index.html');
      const twin = { route: 'article', props: articlePage('Prepared', `<p>${'Compared and compressed there. '.repeat(100)}</p>`) } as const;
      const first = await thread.render('/article/prepared', twin, file);
      if (first.prepared?.unchanged !== false) throw new Error(`a missing file is to be written: ${JSON.stringify(first.prepared)}`);
      const body = Buffer.from(first.body);
      expect(zlib.brotliDecompressSync(first.prepared.twins.br!).equals(body)).toBe(true);
      expect(zlib.gunzipSync(first.prepared.twins.gzip!).equals(body)).toBe(true);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, body);
      expect((await thread.render('/article/prepared', twin, file)).prepared).toEqual({ unchanged: true });
      fs.writeFileSync(file, 'an older page');
      expect((await thread.render('/article/prepared', twin, file)).prepared?.unchanged).toBe(false);
      // A file where the page's folder must be: nothing prepared, so the writer meets the error with its code.
      fs.writeFileSync(path.join(dir, 'blocked'), 'not a folder');
      const blocked = await thread.render('/article/prepared', twin, path.join(dir, 'blocked/index.html'));
      expect(blocked.prepared).toBeUndefined();
      expect(Buffer.from(blocked.body).equals(body)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs at a lower CPU priority than the thread that started it (Linux)', async () => {
    if (process.platform !== 'linux') return;
    await thread.render('/article/priority', { route: 'article', props: articlePage('Priority', '<p>x</p>') });
    const nice = threadNiceValues();
    expect(nice.get(process.pid)).toBe(0);
    expect([...nice.values()]).toContain(10);
  });

  it('fails a page its twin refuses, and draws the next one', async () => {
    // The listing twin of page 1 takes page-1 data only: anything else is refused like an outside caller.
    const wrong: SectionPageData = { section: 'world', title: 'World', description: 'x', page: 3, newestArchive: false, articles: [] };
    await expect(thread.render('/section/world', { route: 'section', props: wrong })).rejects.toThrow(/answered HTTP 404/);
    const html = Buffer.from(
      (await thread.render('/article/after', { route: 'article', props: articlePage('After a refusal', '<p>y</p>') })).body,
    );
    expect(html.toString()).toContain('After a refusal');
  });

  it('gives up on a render past its deadline and stops the thread', async () => {
    const slow = startRenderThread(serverEntry, { timeoutMs: 1 });
    try {
      // Loading the bundle alone takes longer than a millisecond.
      await expect(slow.render('/article/slow', { route: 'article', props: articlePage('Slow', '<p>z</p>') })).rejects.toThrow(
        /took over 1 ms; the render thread is started again/,
      );
    } finally {
      await slow.close();
    }
    await expect(slow.render('/article/closed', { route: 'article', props: articlePage('Closed', '<p>z</p>') })).rejects.toThrow(/closed/);
  });

  it('answers renders run side by side on a pool, each with its own page, and closes every thread', async () => {
    const pool = startRenderPool(serverEntry, 2);
    try {
      const titles = ['Side one', 'Side two', 'Side three', 'Side four', 'Side five'];
      const pages = await Promise.all(
        titles.map((title) => pool.render('/article/side', { route: 'article', props: articlePage(title, '<p>b</p>') })),
      );
      pages.forEach((page, index) => expect(Buffer.from(page.body).toString()).toContain(titles[index]));
      const body = Buffer.from(`<!DOCTYPE html><p>${'Side by side. '.repeat(400)}</p>`);
      expect(zlib.gunzipSync((await pool.compress('/srv/client/article/side/index.html', body)).gzip!).equals(body)).toBe(true);
    } finally {
      await pool.close();
    }
    await expect(pool.render('/article/closed', { route: 'article', props: articlePage('Closed', '<p>z</p>') })).rejects.toThrow(/closed/);
  });
});
