/** The demo seed: a fresh DATA_DIR gets a realistic, valid and repeatable news site. */
import type { ViewCount } from '../../src/schemas/analytics.ts';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import type { ArticleCounters, ArticleRecord } from '../../src/schemas/article.ts';
import type { Comment } from '../../src/schemas/comment.ts';
import { SECTIONS } from '../../src/schemas/common.ts';
import { HERO_WIDTHS } from '../../src/schemas/image.ts';
import { subscriberStatus, type Subscriber } from '../../src/schemas/newsletter.ts';
import { memberSchema, memberStatus, type Member } from '../../src/schemas/member.ts';
import type { NewsSource } from '../../src/schemas/source.ts';
import { sanitizeBodyHtml } from '../../src/server/html.ts';
import { startRuntime, stopRuntime } from '../../src/server/app.ts';
import { seedDemoContent } from '../../src/server/seed.ts';

const HOUR = 3_600_000;
const NOW = new Date('2025-10-20T09:30:00.000Z');

type Snapshot = {
  dataDir: string;
  summary: string;
  articles: ArticleRecord[];
  counters: Map<string, ArticleCounters>;
  comments: Comment[];
  sources: NewsSource[];
  subscribers: Subscriber[];
  members: Member[];
  viewDays: ViewCount[];
  viewHours: ViewCount[];
};

const dataDirs: string[] = [];

/** Seeds a new temp DATA_DIR and reads everything back through the store. */
async function seedInto(): Promise<Snapshot> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-seed-'));
  dataDirs.push(dataDir);
  const runtime = await startRuntime(parseConfig({ DATA_DIR: dataDir, SEED: 'demo' }));
  try {
    const summary = await seedDemoContent(runtime, { now: NOW });
    const store = runtime.store;
    const articles = await store.articles.list({}, { offset: 0, limit: 1000 });
    return {
      dataDir,
      summary,
      articles,
      counters: await store.counters.getMany(articles.map((a) => a.id)),
      comments: await store.comments.list({}, { offset: 0, limit: 1000 }),
      sources: await store.sources.list(),
      subscribers: (await store.subscribers.listFiltered({}, { offset: 0, limit: 1000 })).items,
      members: await store.members.all(),
      viewDays: await store.analytics.listViews('day', 'section', '', '\uffff'),
      viewHours: await store.analytics.listViews('hour', 'article', '', '\uffff'),
    };
  } finally {
    await stopRuntime(runtime);
  }
}

let seed: Snapshot;
const published = () => seed.articles.filter((a) => a.status === 'published');

beforeAll(async () => {
  seed = await seedInto();
});

afterAll(() => {
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('seedDemoContent', () => {
  it('answers a one-line summary of what it created', () => {
    expect(seed.summary).toMatch(
      /^\d+ articles, \d+ comments, 3 sources, \d+ subscribers, \d+ members, \d+ hero images, \d+ page views over 90 days$/,
    );
    expect(seed.summary).toContain(`${seed.articles.length} articles, ${seed.comments.length} comments`);
    expect(seed.summary).toContain(`, ${seed.subscribers.length} subscribers,`);
  });

  it('writes 90 days of page views, weekdays busier than weekends, hours adding up to their days (issue 33)', () => {
    const byDay = new Map<string, number>();
    for (const count of seed.viewDays) byDay.set(count.start, (byDay.get(count.start) ?? 0) + count.views);
    expect(byDay.size).toBe(90);
    const total = [...byDay.values()].reduce((a, b) => a + b, 0);
    expect(seed.summary).toContain(`${total} page views over 90 days`);
    const weekday = (day: string) => new Date(`${day}T12:00:00Z`).getUTCDay();
    const mean = (days: string[]) => days.reduce((n, d) => n + byDay.get(d)!, 0) / days.length;
    const closed = [...byDay.keys()].slice(0, -1);
    expect(mean(closed.filter((d) => weekday(d) % 6 !== 0))).toBeGreaterThan(mean(closed.filter((d) => weekday(d) % 6 === 0)));
    expect(seed.viewHours.length).toBeGreaterThan(0);
  });

  it('fills every section, home included, with at least 7 published articles', () => {
    expect(seed.articles.length).toBeGreaterThanOrEqual(64);
    for (const section of SECTIONS) {
      expect(published().filter((a) => a.section === section).length, section).toBeGreaterThanOrEqual(7);
    }
  });

  it('has 2 drafts, 1 scheduled a few days ahead, 1 archived, the rest published over ~20 days', () => {
    const byStatus = (status: string) => seed.articles.filter((a) => a.status === status);
    expect(byStatus('draft')).toHaveLength(2);
    expect(byStatus('archived')).toHaveLength(1);
    const [scheduled] = byStatus('scheduled');
    expect(byStatus('scheduled')).toHaveLength(1);
    const ahead = Date.parse(scheduled!.scheduledFor!) - NOW.getTime();
    expect(ahead).toBeGreaterThan(24 * HOUR);
    expect(ahead).toBeLessThan(7 * 24 * HOUR);
    for (const draft of byStatus('draft')) expect(draft.publishedAt).toBeUndefined();
    expect(byStatus('archived')[0]!.publishedAt).toBeDefined();

    const ages = published().map((a) => NOW.getTime() - Date.parse(a.publishedAt!));
    expect(Math.min(...ages)).toBeGreaterThan(0);
    expect(Math.max(...ages)).toBeLessThanOrEqual(21 * 24 * HOUR);
    expect(Math.max(...ages)).toBeGreaterThan(15 * 24 * HOUR);
    expect(ages.filter((age) => age <= 48 * HOUR).length).toBeGreaterThanOrEqual(5);
    for (const a of seed.articles) {
      expect(a.createdAt <= a.updatedAt, a.slug).toBe(true);
      if (a.publishedAt) expect(a.createdAt <= a.publishedAt && a.publishedAt <= a.updatedAt, a.slug).toBe(true);
    }
  });

  it('marks a few recent stories breaking, some editor’s picks, and credits aggregated ones', () => {
    const breaking = seed.articles.filter((a) => a.isBreaking);
    expect(breaking.length).toBeGreaterThanOrEqual(4);
    expect(breaking.length).toBeLessThanOrEqual(6);
    for (const a of breaking) {
      expect(a.status).toBe('published');
      expect(NOW.getTime() - Date.parse(a.publishedAt!)).toBeLessThanOrEqual(24 * HOUR);
    }
    const picks = seed.articles.filter((a) => a.isEditorsPick).length;
    expect(picks).toBeGreaterThanOrEqual(8);
    expect(picks).toBeLessThanOrEqual(10);
    const sourced = seed.articles.filter((a) => a.sourceUrl);
    expect(sourced.length).toBeGreaterThanOrEqual(8);
    for (const a of sourced) {
      expect(a.sourceLabel).toBeTruthy();
      expect(new URL(a.sourceUrl!).hostname).toMatch(/(^|\.)example\.(com|org|net)$|\.example$/);
    }
  });

  it('writes distinct, complete articles whose bodies survive the sanitiser unchanged', () => {
    expect(new Set(seed.articles.map((a) => a.slug)).size).toBe(seed.articles.length);
    expect(new Set(seed.articles.map((a) => a.title)).size).toBe(seed.articles.length);
    expect(new Set(seed.articles.map((a) => a.authorName)).size).toBeGreaterThanOrEqual(10);
    for (const a of seed.articles) {
      expect(sanitizeBodyHtml(a.bodyHtml), a.slug).toBe(a.bodyHtml);
      expect(a.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(a.dek, a.slug).toBeTruthy();
      expect(a.tags.length, a.slug).toBeGreaterThan(0);
      expect(a.readingTime, a.slug).toBeGreaterThanOrEqual(1);
      const blocks = a.bodyHtml.match(/<(p|h2|h3|ul|ol|blockquote)>/g)?.length ?? 0;
      expect(blocks, a.slug).toBeGreaterThanOrEqual(4);
    }
  });

  it('gives most articles a 16:9 WebP hero image in every width, stored under its content hash', async () => {
    const withImage = seed.articles.filter((a) => a.heroImage);
    expect(withImage.length).toBeGreaterThanOrEqual(seed.articles.length * 0.8);
    expect(withImage.length).toBeLessThan(seed.articles.length);
    const hashes = new Set<string>();
    for (const a of withImage) {
      const match = /^\/images\/([a-f0-9]{32})\/1200\.webp$/.exec(a.heroImage!);
      expect(match, a.slug).not.toBeNull();
      hashes.add(match![1]!);
    }
    expect(hashes.size).toBeGreaterThanOrEqual(SECTIONS.length * 2);
    for (const hash of hashes) {
      const dir = path.join(seed.dataDir, 'images', hash);
      const largest = fs.readFileSync(path.join(dir, '1200.webp'));
      expect(createHash('sha256').update(largest).digest('hex').slice(0, 32)).toBe(hash);
      for (const width of HERO_WIDTHS) {
        const meta = await sharp(path.join(dir, `${width}.webp`)).metadata();
        expect(meta.format).toBe('webp');
        expect(meta.width).toBe(width);
        expect(meta.height).toBe(Math.round((width * 9) / 16));
      }
    }
  });

  it('gives published articles plausible views, likes and dislikes, and unpublished ones none', () => {
    for (const a of seed.articles) {
      const c = seed.counters.get(a.id)!;
      if (a.status === 'draft' || a.status === 'scheduled') {
        expect(c, a.slug).toEqual({ likes: 0, dislikes: 0, views: 0 });
        continue;
      }
      expect(c.views, a.slug).toBeGreaterThan(20);
      expect(c.likes, a.slug).toBeGreaterThan(0);
      expect(c.likes, a.slug).toBeLessThan(c.views);
      expect(c.dislikes, a.slug).toBeLessThan(c.likes);
    }
  });

  it('adds 20-30 comments on about ten published articles, a couple hidden, dated after publication', () => {
    expect(seed.comments.length).toBeGreaterThanOrEqual(20);
    expect(seed.comments.length).toBeLessThanOrEqual(30);
    const byId = new Map(seed.articles.map((a) => [a.id, a]));
    expect(new Set(seed.comments.map((c) => c.articleId)).size).toBeGreaterThanOrEqual(8);
    expect(seed.comments.filter((c) => c.status === 'hidden').length).toBeGreaterThanOrEqual(2);
    for (const c of seed.comments) {
      const article = byId.get(c.articleId)!;
      expect(article.status).toBe('published');
      expect(c.createdAt > article.publishedAt!).toBe(true);
      expect(Date.parse(c.createdAt)).toBeLessThan(NOW.getTime());
      expect(c.authorEmail).toMatch(/^[^\s@]+@[^\s@]+$/);
    }
  });

  it('adds three disabled RSS sources in different sections, and newsletter subscribers', () => {
    expect(seed.sources).toHaveLength(3);
    expect(new Set(seed.sources.map((s) => s.section)).size).toBe(3);
    for (const s of seed.sources) {
      expect(s.type).toBe('rss');
      expect(s.enabled).toBe(false);
      expect(s.url).toMatch(/^https:\/\//);
    }
    for (const email of ['reader.one@example.com', 'morning.briefing.fan@example.net', 'j.alvarez@example.org'])
      expect(seed.subscribers.map((s) => s.email)).toContain(email);
  });

  it('writes 90 days of sign-ups on a reserved domain: most confirmed within hours, some pending, a few gone (issue 33)', () => {
    const generated = seed.subscribers.filter((s) => s.id.startsWith('demo-reader-'));
    expect(generated.length).toBeGreaterThan(120);
    expect(generated.length).toBeLessThan(220);
    const statuses = { confirmed: 0, pending: 0, unsubscribed: 0 };
    for (const s of generated) {
      statuses[subscriberStatus(s)]++;
      expect(s.email).toMatch(/^reader\d+@example\.com$/);
      const created = Date.parse(s.createdAt);
      expect(created).toBeGreaterThan(NOW.getTime() - 90 * 24 * HOUR);
      expect(created).toBeLessThanOrEqual(NOW.getTime());
      if (s.confirmedAt) expect(Date.parse(s.confirmedAt) - created).toBeLessThanOrEqual(6 * HOUR);
      if (s.unsubscribedAt) expect(Date.parse(s.unsubscribedAt) - Date.parse(s.confirmedAt!)).toBeGreaterThan(6 * 24 * HOUR);
    }
    expect(statuses.confirmed / generated.length).toBeGreaterThan(0.7);
    expect(statuses.pending).toBeGreaterThan(0);
    expect(statuses.unsubscribed).toBeGreaterThan(0);
    // The list grows: more confirmed readers now than a month ago.
    const confirmedAt = (at: number) =>
      generated.filter((s) => s.confirmedAt && Date.parse(s.confirmedAt) <= at && !(s.unsubscribedAt && Date.parse(s.unsubscribedAt) <= at))
        .length;
    expect(confirmedAt(NOW.getTime())).toBeGreaterThan(confirmedAt(NOW.getTime() - 30 * 24 * HOUR) + 20);
  });

  it('adds members over 90 days: free, paying monthly and yearly, cancelled, comped (issue 48)', () => {
    expect(seed.summary).toContain(`, ${seed.members.length} members,`);
    expect(seed.members.length).toBeGreaterThan(25);
    for (const m of seed.members) {
      expect(memberSchema.parse(m)).toEqual(m);
      expect(m.email).toMatch(/^member\d+@example\.com$/);
      expect(m.history[0]!.kind).toBe('signed-up');
      expect(m.history.map((line) => line.at)).toEqual(m.history.map((line) => line.at).sort());
    }
    const statuses = seed.members.map((m) => memberStatus(m, NOW.getTime()));
    for (const status of ['free', 'paid', 'comped'] as const) expect(statuses, status).toContain(status);
    expect(seed.members.some((m) => m.subscription?.interval === 'year')).toBe(true);
    expect(seed.members.some((m) => m.subscription?.status === 'canceled' && m.subscription.endedAt)).toBe(true);
  });

  it('creates the same content on every run', async () => {
    const again = await seedInto();
    const content = (s: Snapshot) =>
      s.articles.map(({ id, ...rest }) => ({ ...rest, counters: s.counters.get(id) })).sort((a, b) => a.slug.localeCompare(b.slug));
    expect(content(again)).toEqual(content(seed));
    expect(again.summary).toBe(seed.summary);
    expect(again.members).toEqual(seed.members);
  });
});
