/**
 * Access levels (issue 48): a members-only and a paid story leave the server whole only through the
 * content API, for a reader whose level allows it. Every file the server serves (their brotli and gzip
 * twins and Pagefind's bundles decompressed), the feeds, /api/search and the public article API hold
 * the teaser and never the rest; one server for the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article, ArticleSummary } from '../../src/schemas/article.ts';
import { signInMember } from '../helpers/members.ts';
import { adminClient, createArticle, read, startApiServer, TestClient, waitFor, waitForQuietPublishing } from './support.ts';

/** A word no other text holds: letters only, so neither tokenizer splits it and Pagefind's stemmer leaves its first letters alone. */
const uniqueWord = (prefix: string) => `${prefix}${[...randomBytes(6)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}x`;

/** A story whose first two paragraphs are the teaser and whose fourth holds a sentence found nowhere else. */
function gatedStory(teaserWord: string, secretWord: string): { bodyHtml: string; secret: string } {
  const filler = (n: number) =>
    `<p>Paragraph ${n} goes on about the council's budget, the roads, the schools and the parks, at the length a real story has.</p>`;
  const secret = `The ledger in the vault names ${secretWord} as the buyer.`;
  const bodyHtml = [
    `<p>The opening paragraph says ${teaserWord} is on the council's agenda tonight.</p>`,
    '<p>The second paragraph sets out what the vote would change for the town.</p>',
    filler(3),
    `<p>${secret}</p>`,
    filler(5),
    filler(6),
    filler(7),
  ].join('\n');
  return { bodyHtml, secret };
}

const membersTeaser = uniqueWord('lumenteaser');
const membersSecret = uniqueWord('vorpalsecret');
const paidTeaser = uniqueWord('lumenpaid');
const paidSecret = uniqueWord('vorpalpaid');
const draftSecret = uniqueWord('vorpaldraft');
const SECRETS = [membersSecret, paidSecret, draftSecret];

/** What each served file reads as: brotli and gzip twins and Pagefind's gzipped bundles decompressed. */
function readServedText(file: string): string {
  const bytes = fs.readFileSync(file);
  if (file.endsWith('.br')) return zlib.brotliDecompressSync(bytes).toString('utf8');
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return zlib.gunzipSync(bytes).toString('utf8');
  return bytes.toString('utf8');
}

function servedFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(dir, name))
    .filter((file) => fs.statSync(file).isFile());
}

let server: TestServer;
let admin: TestClient;
let membersStory: Article;
let paidStory: Article;
let draftStory: Article;
let members: { bodyHtml: string; secret: string };
let paid: { bodyHtml: string; secret: string };
let freeMember: string;

const anonymous = () => new TestClient(server.url);
function withCookie(cookie: string): TestClient {
  const client = new TestClient(server.url);
  const [name, value] = cookie.split('=') as [string, string];
  client.cookies.set(name, value);
  return client;
}
const content = (client: TestClient, id: string) => client.get(`/api/members/content/${encodeURIComponent(id)}`);
const fetchText = async (publicPath: string) => (await fetch(new URL(publicPath, server.url))).text();

/** The JSON-LD object of an article page. */
function jsonLdOf(html: string): Record<string, unknown> {
  const script = /<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec(html)?.[1];
  expect(script, 'the page has JSON-LD').toBeDefined();
  return JSON.parse(script!) as Record<string, unknown>;
}

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  members = gatedStory(membersTeaser, membersSecret);
  paid = gatedStory(paidTeaser, paidSecret);
  membersStory = await createArticle(admin, {
    title: 'Council weighs the harbour sale',
    dek: 'A vote tonight',
    section: 'politics',
    tags: ['harbour'],
    status: 'published',
    access: 'members',
    bodyHtml: members.bodyHtml,
  });
  paidStory = await createArticle(admin, {
    title: 'Who bought the harbour',
    section: 'politics',
    status: 'published',
    access: 'paid',
    bodyHtml: paid.bodyHtml,
  });
  draftStory = await createArticle(admin, {
    title: 'A gated draft',
    status: 'draft',
    access: 'members',
    bodyHtml: gatedStory(uniqueWord('lumendraft'), draftSecret).bodyHtml,
  });
  freeMember = (await signInMember(server.url, server.dataDir, 'free.reader@example.com', 'Free Reader')).cookie;
  await waitForQuietPublishing(admin);
});

afterAll(async () => {
  await server?.stop();
});

beforeEach(() => {
  onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-4000)}`));
});

describe('a gated story as the server serves it', () => {
  it('keeps its access level, public by default, in the API', () => {
    expect(membersStory.access).toBe('members');
    expect(paidStory.access).toBe('paid');
    expect(draftStory.access).toBe('members');
  });

  it('has a page with the headline, deck, teaser and the paywall box, the paywalled-content markup, and not the rest', async () => {
    for (const [story, teaser, secret] of [
      [membersStory, membersTeaser, membersSecret],
      [paidStory, paidTeaser, paidSecret],
    ] as const) {
      const html = await fetchText(`/article/${story.slug}`);
      expect(html).toContain(story.title);
      expect(html).toContain(teaser);
      expect(html).toContain('The second paragraph sets out');
      expect(html).not.toContain('Paragraph 3 goes on');
      expect(html).not.toContain(secret);
      expect(html).toContain('data-testid="paywall"');
      expect(html).toContain(`/account/sign-in?next=${encodeURIComponent(`/article/${story.slug}`)}`);
      const jsonLd = jsonLdOf(html);
      expect(jsonLd.isAccessibleForFree).toBe(false);
      expect(jsonLd.hasPart).toEqual({ '@type': 'WebPageElement', isAccessibleForFree: false, cssSelector: '.article-gated' });
      expect(html).toContain('class="article-gated"');
    }
    expect(await fetchText(`/article/${membersStory.slug}`)).toContain('This story is for members');
    expect(await fetchText(`/article/${paidStory.slug}`)).toContain('This story is for paying subscribers');
  });

  it('is in no file of the served folder (brotli, gzip and Pagefind decompressed), while its teaser is', () => {
    const files = servedFiles(server.clientDir);
    const holding = new Set<string>();
    for (const file of files) {
      const text = readServedText(file).toLowerCase();
      for (const secret of SECRETS)
        expect(text.includes(secret.slice(0, 14)), `${path.relative(server.clientDir, file)} holds ${secret}`).toBe(false);
      if (text.includes(membersTeaser.slice(0, 14))) holding.add(path.relative(server.clientDir, file));
    }
    // The walk reads what it must: the page and its twins, and Pagefind's bundle of the teaser.
    const page = path.join('article', membersStory.slug, 'index.html');
    expect([...holding]).toEqual(expect.arrayContaining([page, `${page}.br`, `${page}.gz`]));
    expect(
      [...holding].some((file) => file.startsWith(`pagefind${path.sep}`) && file.includes('fragment')),
      [...holding].join(', '),
    ).toBe(true);
  });

  it('is in no feed or sitemap, which list it', async () => {
    for (const feed of ['/rss.xml', '/section/politics/rss.xml', '/news-sitemap.xml', '/tag/harbour/rss.xml']) {
      const text = await fetchText(feed);
      expect(text, feed).toContain(`/article/${membersStory.slug}`);
      for (const secret of SECRETS) expect(text, feed).not.toContain(secret);
    }
  });

  it('is found by search through its teaser, never through the rest', async () => {
    const search = async (q: string) => (await read<ArticleSummary[]>(await anonymous().get(`/api/search?q=${q}`))).body;
    expect((await search(membersTeaser)).map((a) => a.id)).toEqual([membersStory.id]);
    expect((await search(paidTeaser)).map((a) => a.id)).toEqual([paidStory.id]);
    expect(await search(membersSecret)).toEqual([]);
    expect(await search(paidSecret)).toEqual([]);
  });

  it('comes from the public article API as its teaser for readers and members, whole for staff', async () => {
    for (const client of [anonymous(), withCookie(freeMember)]) {
      for (const pathname of [`/api/articles/${membersStory.id}`, `/api/articles/by-slug/${membersStory.slug}`]) {
        const { status, body } = await read<Article>(await client.get(pathname));
        expect(status, pathname).toBe(200);
        expect(body.access).toBe('members');
        expect(body.bodyHtml).toContain(membersTeaser);
        expect(body.bodyHtml).not.toContain(membersSecret);
      }
      const list = (await read<Article[]>(await client.get('/api/articles?section=politics'))).body;
      expect(list.map((a) => a.id)).toEqual(expect.arrayContaining([membersStory.id, paidStory.id]));
      for (const article of list) for (const secret of SECRETS) expect(article.bodyHtml).not.toContain(secret);
    }
    const staff = (await read<Article>(await admin.get(`/api/articles/${membersStory.id}`))).body;
    expect(staff.bodyHtml).toContain(members.secret);
  });
});

describe('GET /api/members/content/{id}', () => {
  it('answers 401 to a reader who is not signed in', async () => {
    for (const story of [membersStory, paidStory]) {
      const response = await content(anonymous(), story.id);
      expect(response.status).toBe(401);
      expect(await response.text()).not.toContain('vorpal');
    }
  });

  it('answers a free member the whole members-only story, privately, and 403 for the paid one', async () => {
    const member = withCookie(freeMember);
    const response = await content(member, membersStory.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    const { bodyHtml } = (await response.json()) as { bodyHtml: string };
    expect(bodyHtml).toContain(members.secret);
    expect(bodyHtml).toContain(membersTeaser);

    const refused = await content(member, paidStory.id);
    expect(refused.status).toBe(403);
    expect(await refused.text()).not.toContain(paidSecret);
  });

  it('answers staff every story, and 404 for a draft or an unknown id whoever asks', async () => {
    expect((await read<{ bodyHtml: string }>(await content(admin, paidStory.id))).body.bodyHtml).toContain(paid.secret);
    for (const client of [withCookie(freeMember), anonymous()]) {
      expect((await content(client, draftStory.id)).status).toBe(404);
      expect((await content(client, 'no-such-article')).status).toBe(404);
    }
  });
});

describe('changing access', () => {
  it('regenerates the page, search and the API: public shows the whole story, gated again hides it', async () => {
    const saved = await admin.put(`/api/articles/${membersStory.id}`, { access: 'public' });
    expect(saved.status, await saved.clone().text()).toBe(200);
    expect(((await saved.json()) as Article).access).toBe('public');
    const open = await waitFor('the public page with the whole story', async () => {
      const html = await fetchText(`/article/${membersStory.slug}`);
      return html.includes(members.secret) ? html : undefined;
    });
    expect(open).not.toContain('data-testid="paywall"');
    expect(jsonLdOf(open).isAccessibleForFree).toBe(true);
    expect(jsonLdOf(open).hasPart).toBeUndefined();
    const found = (await read<ArticleSummary[]>(await anonymous().get(`/api/search?q=${membersSecret}`))).body;
    expect(found.map((a) => a.id)).toEqual([membersStory.id]);
    expect((await read<Article>(await anonymous().get(`/api/articles/${membersStory.id}`))).body.bodyHtml).toContain(members.secret);

    await admin.put(`/api/articles/${membersStory.id}`, { access: 'paid' });
    await waitFor('the page gated again', async () => !(await fetchText(`/article/${membersStory.slug}`)).includes(members.secret));
    await waitForQuietPublishing(admin);
    expect((await read<ArticleSummary[]>(await anonymous().get(`/api/search?q=${membersSecret}`))).body).toEqual([]);
    for (const file of servedFiles(server.clientDir))
      expect(readServedText(file).toLowerCase().includes(membersSecret.slice(0, 14)), path.relative(server.clientDir, file)).toBe(false);
    expect((await content(withCookie(freeMember), membersStory.id)).status).toBe(403);
  });
});
