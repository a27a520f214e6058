/**
 * The analytics API (issue 33) on the real server, in a half-hour zone (Asia/Kolkata, UTC+5:30): exact
 * figures after views scripted across hour and day boundaries with the clock moved, then live beacons
 * (staff, bots and agents-less requests not counted, nothing lost on a clean stop), roles and 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { databaseFor, testingPostgres } from '../helpers/postgres.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { Subscriber } from '../../src/schemas/newsletter.ts';
import type { AnalyticsSummary, ArticleAnalytics, ReferrerReport, Sparklines, TopArticles } from '../../src/schemas/analytics.ts';
import { openStore } from '../../src/store/index.ts';
import { setClock } from '../../src/server/clock.ts';
import { ViewRecorder, type PageView } from '../../src/server/analytics/recorder.ts';
import { addDays, dayStartMs, newsroomDay } from '../../src/server/calendar.ts';
import { TestClient, adminClient, createArticle, expectError, read } from './support.ts';

const TZ = 'Asia/Kolkata';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
const HOUR = 3_600_000;

let server: TestServer;
let dataDir: string;
let admin: TestClient;
let worldStory: Article;
let techStory: Article;
let authorStory: Article;
let author: TestClient;
let contributor: TestClient;
/** The scripted day (three newsroom days ago) and the one before it. */
let day: string;
let dayBefore: string;
let today: string;

function start(dir?: string): Promise<TestServer> {
  return startServer({ ...(dir ? { dataDir: dir } : {}), env: { TRUST_PROXY: 'true', BRIEFING_TZ: TZ } });
}

async function signIn(username: string, role: string): Promise<TestClient> {
  const password = `${username}-password`;
  expect((await admin.post('/api/users', { username, role, password })).status).toBe(201);
  const client = new TestClient(server.url);
  await client.login(username, password);
  return client;
}

/** Records views straight into the stopped server's store, at instants the test chooses. */
async function scriptViews(views: [at: number, view: PageView][]): Promise<void> {
  const store = await openStore(dataDir, 'write', { databaseUrl: testingPostgres() ? await databaseFor(dataDir) : undefined });
  const recorder = new ViewRecorder(store.analytics, TZ, { error: (_o, message) => console.error(message) });
  try {
    for (const [at, view] of views) {
      setClock(() => at);
      recorder.record(view);
    }
  } finally {
    setClock(undefined);
    await recorder.stop();
    await store.close();
  }
}

/** Writes subscribers straight into the stopped server's store. */
async function scriptSubscribers(subscribers: Subscriber[]): Promise<void> {
  const store = await openStore(dataDir, 'write', { databaseUrl: testingPostgres() ? await databaseFor(dataDir) : undefined });
  try {
    for (const subscriber of subscribers) await store.subscribers.upsert(subscriber);
  } finally {
    await store.close();
  }
}

async function get<T>(client: TestClient, path: string): Promise<T> {
  const { status, body } = await read<T>(await client.get(path));
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

beforeAll(async () => {
  server = await start();
  dataDir = server.dataDir;
  admin = await adminClient(server);
  worldStory = await createArticle(admin, { title: 'World story', section: 'world', status: 'published' });
  techStory = await createArticle(admin, { title: 'Tech story', section: 'tech', status: 'published' });
  author = await signIn('analytics-author', 'author');
  contributor = await signIn('analytics-contributor', 'contributor');
  authorStory = await createArticle(author, { title: 'Author story', section: 'culture' });
  expect((await admin.put(`/api/articles/${authorStory.id}`, { status: 'published' })).status).toBe(200);
  await server.stop();

  today = newsroomDay(Date.now(), TZ);
  day = addDays(today, -3);
  dayBefore = addDays(day, -1);
  const midnight = dayStartMs(day, TZ);
  // Kolkata's midnight is 18:30 UTC: a UTC-hour layout would split this day's first hour.
  expect(new Date(midnight).toISOString()).toBe(`${dayBefore}T18:30:00.000Z`);
  const direct = { kind: 'direct', host: '(direct)' } as const;
  const world = (device: PageView['device'], referrer: PageView['referrer']): PageView => ({
    section: 'world',
    articleId: worldStory.id,
    referrer,
    device,
  });
  const tech: PageView = { section: 'tech', articleId: techStory.id, referrer: { kind: 'other', host: 'example.org' }, device: 'desktop' };
  await scriptViews([
    [midnight - 1000, world('mobile', { kind: 'search', host: 'google.com' })],
    [midnight, world('desktop', { kind: 'newsletter', host: 'newsletter' })],
    [midnight + HOUR - 1000, world('tablet', direct)],
    [midnight + HOUR, world('desktop', { kind: 'social', host: 't.co' })],
    [midnight + HOUR / 2, tech],
    [midnight + HOUR / 2, tech],
    [midnight + HOUR / 2 + 1, tech],
    [midnight + 2 * HOUR, { section: 'world', referrer: direct, device: 'desktop' }],
    [midnight + 2 * HOUR, { section: '(front)', referrer: direct, device: 'desktop' }],
    [midnight + 3 * HOUR, { section: 'culture', articleId: authorStory.id, referrer: direct, device: 'mobile' }],
  ]);
  const at = (ms: number) => new Date(ms).toISOString();
  const subscriber = (name: string, fields: Partial<Subscriber>): Subscriber => ({
    id: `s-${name}`,
    email: `${name}@example.com`,
    token: `token${name}xxxxxxxxxxxxxxxx`,
    createdAt: at(midnight - 10 * 24 * HOUR),
    ...fields,
  });
  const pending = { confirmTokenHash: 'a'.repeat(64), confirmExpiresAt: at(midnight + 24 * HOUR) };
  await scriptSubscribers([
    // From before double opt-in: confirmed when created, ten days ago.
    subscriber('legacy', {}),
    // Confirmed a second after the newsroom's midnight: still the day before in UTC.
    subscriber('confirmed', { ...pending, confirmedAt: at(midnight + 1000) }),
    subscriber('left-earlier', { ...pending, confirmedAt: at(midnight - 5 * 24 * HOUR), unsubscribedAt: at(midnight - 24 * HOUR - 1000) }),
    subscriber('pending', pending),
    subscriber('left', { ...pending, confirmedAt: at(midnight - 24 * HOUR), unsubscribedAt: at(midnight + 2 * HOUR) }),
    subscriber('never-confirmed', { ...pending, unsubscribedAt: at(midnight + 3 * HOUR) }),
  ]);
  server = await start(dataDir);
  admin = await adminClient(server);
  author = new TestClient(server.url);
  await author.login('analytics-author', 'analytics-author-password');
  contributor = new TestClient(server.url);
  await contributor.login('analytics-contributor', 'analytics-contributor-password');
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('figures after scripted views (clock moved, UTC+5:30)', () => {
  it('summary: newsroom days by section, the period before, devices', async () => {
    const summary = await get<AnalyticsSummary>(admin, `/api/analytics/summary?from=${dayBefore}&to=${day}`);
    expect(summary.timeZone).toBe(TZ);
    expect(summary.days).toEqual([
      { day: dayBefore, views: 1, sections: { world: 1 } },
      { day, views: 9, sections: { world: 4, tech: 3, '(front)': 1, culture: 1 } },
    ]);
    expect(summary.previous).toEqual([
      { day: addDays(dayBefore, -2), views: 0 },
      { day: addDays(dayBefore, -1), views: 0 },
    ]);
    expect(summary.totals).toEqual({ views: 10, previousViews: 0 });
    expect(summary.devices).toEqual({ mobile: 2, tablet: 1, desktop: 7 });
    expect(summary.readingNow).toBe(0);
    expect(summary.published.map((p) => p.editorial)).toEqual([0, 0]);
    // Running totals at the end of each newsroom day (the scripted subscribers above).
    expect(summary.subscribers).toEqual([
      { day: dayBefore, confirmed: 2, unsubscribed: 1 },
      { day, confirmed: 2, unsubscribed: 3 },
    ]);

    const world = await get<AnalyticsSummary>(admin, `/api/analytics/summary?from=${day}&to=${day}&section=world`);
    expect(world.section).toBe('world');
    expect(world.days).toEqual([{ day, views: 4, sections: { world: 4 } }]);
    expect(world.previous).toEqual([{ day: dayBefore, views: 1 }]);
    expect(world.devices).toEqual({ mobile: 0, tablet: 1, desktop: 3 });
    // Defaults: the last 30 days up to today.
    const defaults = await get<AnalyticsSummary>(admin, '/api/analytics/summary');
    expect(defaults.to).toBe(today);
    expect(defaults.days).toHaveLength(30);
    expect(defaults.totals.views).toBe(10);
  });

  it('articles/{id}: by newsroom hour (starting at :30 UTC) and by day, with totals', async () => {
    const hourly = await get<ArticleAnalytics>(
      admin,
      `/api/analytics/articles/${worldStory.id}?from=${dayBefore}&to=${day}&granularity=hour`,
    );
    expect(hourly.granularity).toBe('hour');
    expect(hourly.points).toHaveLength(48);
    const midnight = dayStartMs(day, TZ);
    expect(hourly.points.filter((p) => p.views > 0)).toEqual([
      { t: new Date(midnight - HOUR).toISOString(), views: 1 },
      { t: new Date(midnight).toISOString(), views: 2 },
      { t: new Date(midnight + HOUR).toISOString(), views: 1 },
    ]);
    expect(hourly.points[0]!.t).toBe(`${addDays(dayBefore, -1)}T18:30:00.000Z`);
    const daily = await get<ArticleAnalytics>(
      admin,
      `/api/analytics/articles/${worldStory.id}?from=${dayBefore}&to=${day}&granularity=day`,
    );
    expect(daily.points).toEqual([
      { t: dayBefore, views: 1 },
      { t: day, views: 3 },
    ]);
    expect(daily.totals).toEqual({ views: 0, likes: 0, dislikes: 0, comments: 0 });
    expect(daily.title).toBe('World story');
    // Default: hourly since publication (a few seconds old article: hours since then).
    const fresh = await get<ArticleAnalytics>(admin, `/api/analytics/articles/${techStory.id}`);
    expect(fresh.granularity).toBe('hour');
    expect(fresh.points.length).toBeGreaterThanOrEqual(1);
    await expectError(await admin.get('/api/analytics/articles/no-such-article'), 404);
  });

  it('referrers, sparklines and top: exact, by kind and host', async () => {
    const referrers = await get<ReferrerReport>(admin, `/api/analytics/referrers?from=${dayBefore}&to=${day}&limit=3`);
    expect(referrers.kinds).toEqual({ search: 1, social: 1, direct: 4, newsletter: 1, other: 3 });
    expect(referrers.items).toEqual([
      { host: '(direct)', kind: 'direct', views: 4 },
      { host: 'example.org', kind: 'other', views: 3 },
      { host: 'google.com', kind: 'search', views: 1 },
    ]);
    const tech = await get<ReferrerReport>(admin, `/api/analytics/referrers?from=${day}&to=${day}&section=tech`);
    expect(tech.kinds).toEqual({ search: 0, social: 0, direct: 0, newsletter: 0, other: 3 });

    const sparks = await get<Sparklines>(admin, `/api/analytics/sparklines?ids=${worldStory.id},${techStory.id}&days=5`);
    expect(sparks).toEqual({ days: 5, items: { [worldStory.id]: [1, 3, 0, 0, 0], [techStory.id]: [0, 3, 0, 0, 0] } });

    const top = await get<TopArticles>(admin, '/api/analytics/top?period=7d');
    expect(top.items.map((i) => [i.title, i.views, i.spark])).toEqual([
      ['World story', 4, [0, 0, 1, 3, 0, 0, 0]],
      ['Tech story', 3, [0, 0, 0, 3, 0, 0, 0]],
      ['Author story', 1, [0, 0, 0, 1, 0, 0, 0]],
    ]);
    expect((await get<TopArticles>(admin, '/api/analytics/top?period=7d&limit=1')).items).toHaveLength(1);
  });

  it('authors see only their own articles; contributors and signed-out readers nothing', async () => {
    const top = await get<TopArticles>(author, '/api/analytics/top?period=30d');
    expect(top.items.map((i) => [i.id, i.views])).toEqual([[authorStory.id, 1]]);
    const sparks = await get<Sparklines>(author, `/api/analytics/sparklines?ids=${worldStory.id},${authorStory.id}&days=5`);
    expect(Object.keys(sparks.items)).toEqual([authorStory.id]);
    expect((await get<ArticleAnalytics>(author, `/api/analytics/articles/${authorStory.id}?granularity=day`)).granularity).toBe('day');
    await expectError(await author.get(`/api/analytics/articles/${worldStory.id}`), 403, /^Your role \(author\) cannot /);
    await expectError(await author.get('/api/analytics/summary'), 403);
    await expectError(await author.get('/api/analytics/referrers'), 403);
    for (const path of ['/api/analytics/summary', '/api/analytics/top', `/api/analytics/sparklines?ids=${worldStory.id}`])
      await expectError(await contributor.get(path), 403);
    await expectError(await new TestClient(server.url).get('/api/analytics/top'), 401);
  });

  it('answers 400 with issues for bad queries', async () => {
    for (const path of [
      '/api/analytics/summary?from=2026-13-01',
      '/api/analytics/summary?from=yesterday',
      `/api/analytics/summary?from=${day}&to=${dayBefore}`,
      '/api/analytics/summary?from=2020-01-01&to=2022-01-02',
      '/api/analytics/summary?section=markets',
      '/api/analytics/top?period=year',
      '/api/analytics/top?limit=0',
      '/api/analytics/top?limit=51',
      `/api/analytics/articles/${worldStory.id}?granularity=minute`,
      `/api/analytics/articles/${worldStory.id}?granularity=hour&from=2026-01-01&to=2026-03-01`,
      '/api/analytics/referrers?to=2019-02-30',
      '/api/analytics/sparklines',
      `/api/analytics/sparklines?ids=${Array.from({ length: 101 }, (_, i) => `a${i}`).join(',')}`,
      `/api/analytics/sparklines?ids=${worldStory.id}&days=91`,
    ]) {
      const error = await expectError(await admin.get(path), 400);
      expect(error.issues?.length, path).toBeGreaterThan(0);
    }
  });
});

describe('live beacons', () => {
  const beacon = (client: TestClient, body: object, headers: Record<string, string> = { 'User-Agent': BROWSER }) =>
    client.request('POST', '/api/analytics/pageview', { json: body, headers });

  it('counts readers, not staff or bots, and loses nothing on a clean stop', async () => {
    const reader = new TestClient(server.url);
    const phone =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
    expect((await beacon(reader, { path: `/article/${techStory.slug}`, ref: 'newsletter' })).status).toBe(204);
    expect(
      (await beacon(reader, { path: '/section/world', referrer: 'https://www.google.com/search?q=x' }, { 'User-Agent': phone })).status,
    ).toBe(204);
    // The old body still works.
    expect((await beacon(reader, { path: '/' })).status).toBe(204);
    // Not counted: staff (a session), a crawler, no user agent, a draft, a path that is no page.
    expect((await beacon(admin, { path: `/article/${techStory.slug}` })).status).toBe(204);
    expect(
      (await beacon(reader, { path: `/article/${techStory.slug}` }, { 'User-Agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' }))
        .status,
    ).toBe(204);
    expect((await beacon(reader, { path: `/article/${techStory.slug}` }, { 'User-Agent': '' })).status).toBe(204);
    expect((await beacon(reader, { path: '/about' })).status).toBe(204);
    // Stopped at once: the views are still in memory, and the clean stop stores them.
    await server.stop();
    server = await start(dataDir);
    admin = await adminClient(server);
    const summary = await get<AnalyticsSummary>(admin, `/api/analytics/summary?from=${today}&to=${today}`);
    expect(summary.days).toEqual([{ day: today, views: 3, sections: { tech: 1, world: 1, '(front)': 1 } }]);
    expect(summary.readingNow).toBe(3);
    expect(summary.devices).toEqual({ mobile: 1, tablet: 0, desktop: 2 });
    const referrers = await get<ReferrerReport>(admin, `/api/analytics/referrers?from=${today}&to=${today}`);
    expect(referrers.kinds).toEqual({ search: 1, social: 0, direct: 1, newsletter: 1, other: 0 });
    const top = await get<TopArticles>(admin, '/api/analytics/top?period=today');
    expect(top.items.map((i) => [i.id, i.views, i.spark.reduce((a, b) => a + b, 0)])).toEqual([[techStory.id, 1, 1]]);
    // The running total counts the same views.
    expect((await read<Article>(await admin.get(`/api/articles/${techStory.id}`))).body.views).toBe(1);
  });
});
