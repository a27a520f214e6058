/**
 * Demo content for a fresh DATA_DIR: the articles, comments, sources and subscribers of data/seed/, with generated hero images and
 * counters.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import { articleInputSchema, type ArticleCounters, type ArticleRecord } from '../schemas/article.ts';
import type { Section } from '../schemas/common.ts';
import { HERO_WIDTHS, heroImagePath } from '../schemas/image.ts';
import { buildArticle } from './articles.ts';
import type { Runtime } from './runtime.ts';
import { loadSeedFixtures, type SeedArticle, type SeedFixtures } from './seed/fixtures.ts';
import { HERO_VARIANTS, renderHeroSvg, writeHeroImage } from './seed/hero-images.ts';
import { seedMemberHistory } from './seed/member-history.ts';
import { seedSubscriberHistory } from './seed/subscriber-history.ts';
import { seedViewHistory } from './seed/view-history.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export type SeedOptions = {
  /** The moment the seed is relative to (publication dates count back from it). @default now */
  now?: Date;
  /** Folder of the fixtures. @default data/seed of this checkout */
  fixturesDir?: string;
};

const iso = (ms: number) => new Date(ms).toISOString();

/** A stable number in [0, 1) per text and salt, so counters and offsets are the same on every run. */
function stableFraction(text: string, salt: string): number {
  return createHash('sha256').update(`${salt}:${text}`).digest().readUInt32LE(0) / 2 ** 32;
}

function heroVariant(article: SeedArticle, index: number): number | undefined {
  if (article.image === null) return undefined;
  return (article.image ?? index) % HERO_VARIANTS;
}

/** Renders each section variant the fixtures use, once; answers heroImage paths by "section:variant". */
async function generateHeroImages(runtime: Runtime, fixtures: SeedFixtures): Promise<Map<string, string>> {
  const imagesDir = path.join(path.resolve(runtime.config.DATA_DIR), 'images');
  const wanted = new Map<string, { section: Section; variant: number }>();
  for (const file of fixtures.sections) {
    file.articles.forEach((article, index) => {
      const variant = heroVariant(article, index);
      if (variant !== undefined) wanted.set(`${file.section}:${variant}`, { section: file.section, variant });
    });
  }
  const entries = await Promise.all(
    [...wanted].map(
      async ([key, { section, variant }]) => [key, await writeHeroImage(imagesDir, renderHeroSvg(section, variant))] as const,
    ),
  );
  // Several servers on one database: the others copy the images into their own DATA_DIR/images.
  if (runtime.store.pages.shared) {
    for (const hash of new Set(entries.map(([, largest]) => largest.split('/')[2]!))) {
      for (const width of HERO_WIDTHS) {
        await runtime.store.pages.put(heroImagePath(hash, width), await fs.readFile(path.join(imagesDir, hash, `${width}.webp`)), 'seed');
      }
    }
  }
  return new Map(entries);
}

/** Publication history of a fixture article relative to `now`: created, published, last updated. */
function datesOf(article: SeedArticle, slug: string, now: number): Pick<ArticleRecord, 'createdAt' | 'updatedAt' | 'publishedAt'> {
  const at = now - article.hoursAgo * HOUR;
  const lead = Math.round(30 + stableFraction(slug, 'lead') * 150) * MINUTE;
  switch (article.status) {
    case 'draft':
      return { createdAt: iso(at - DAY - lead), updatedAt: iso(at) };
    case 'scheduled':
      return { createdAt: iso(at - lead), updatedAt: iso(at) };
    case 'archived':
      // Unpublished some time after it ran.
      return { createdAt: iso(at - lead), publishedAt: iso(at), updatedAt: iso(at + (article.hoursAgo / 2) * HOUR) };
    default: {
      // Breaking stories get a later update, as live stories do.
      const update = article.breaking ? Math.min(article.hoursAgo / 2, 1) * HOUR : 0;
      return { createdAt: iso(at - lead), publishedAt: iso(at), updatedAt: iso(at + update) };
    }
  }
}

/** Plausible engagement: older, breaking and picked stories have more views; opinion divides readers. */
function countersOf(record: ArticleRecord, article: SeedArticle): ArticleCounters {
  if (record.status !== 'published' && record.status !== 'archived') return { likes: 0, dislikes: 0, views: 0 };
  // Modest numbers: the store counts views one by one (see applyCounters), and this is a young site.
  const reach = 120 + stableFraction(record.slug, 'views') * 900;
  const boost = (article.breaking ? 2.5 : 1) * (article.editorsPick ? 1.6 : 1);
  const age = Math.min(1, 0.3 + article.hoursAgo / 48);
  const views = Math.round(reach * boost * age);
  const likes = Math.round(views * (0.015 + stableFraction(record.slug, 'likes') * 0.05));
  const divisive = record.section === 'opinion' || record.section === 'politics';
  const dislikeRate = divisive ? 0.1 + stableFraction(record.slug, 'dislikes') * 0.3 : 0.02 + stableFraction(record.slug, 'dislikes') * 0.1;
  return { views, likes, dislikes: Math.round(likes * dislikeRate) };
}

async function applyCounters(runtime: Runtime, articleId: string, counters: ArticleCounters): Promise<void> {
  const store = runtime.store.counters;
  if (counters.likes > 0) await store.adjust(articleId, 'like', counters.likes);
  if (counters.dislikes > 0) await store.adjust(articleId, 'dislike', counters.dislikes);
  // The store only counts views one at a time; concurrent writes coalesce into one file write,
  // but each call still serialises the counters, so the seed keeps view counts in the hundreds.
  await Promise.all(Array.from({ length: counters.views }, () => store.incrementViews(articleId)));
}

async function seedArticles(runtime: Runtime, fixtures: SeedFixtures, heroes: Map<string, string>, now: number): Promise<ArticleRecord[]> {
  const records: ArticleRecord[] = [];
  for (const file of fixtures.sections) {
    for (const [index, article] of file.articles.entries()) {
      const bodyHtml = article.body.join('\n');
      const variant = heroVariant(article, index);
      const input = articleInputSchema.parse({
        title: article.title,
        dek: article.dek,
        bodyHtml,
        heroImage: variant === undefined ? undefined : heroes.get(`${file.section}:${variant}`),
        section: file.section,
        tags: article.tags,
        authorName: article.author,
        sourceLabel: article.source?.label,
        sourceUrl: article.source?.url,
        isBreaking: article.breaking,
        isEditorsPick: article.editorsPick,
        status: article.status,
        scheduledFor: article.scheduledInHours === undefined ? undefined : iso(now + article.scheduledInHours * HOUR),
      });
      const built = await buildArticle(runtime, input, iso(now));
      // buildArticle sanitises; a fixture must already be exactly what the editor would store.
      if (built.bodyHtml !== bodyHtml) {
        throw new Error(
          `Seed article "${article.title}" has body HTML that the sanitiser changes; fix data/seed/articles/${file.section}.json`,
        );
      }
      const record: ArticleRecord = { ...built, ...datesOf(article, built.slug, now) };
      await runtime.store.articles.insert(record);
      await applyCounters(runtime, record.id, countersOf(record, article));
      records.push(record);
    }
  }
  return records;
}

async function seedComments(runtime: Runtime, fixtures: SeedFixtures, records: ArticleRecord[], now: number): Promise<number> {
  const bySlug = new Map(records.map((r) => [r.slug, r]));
  for (const comment of fixtures.comments) {
    const article = bySlug.get(comment.article);
    if (!article?.publishedAt)
      throw new Error(`Seed comment by ${comment.authorName} refers to "${comment.article}", which is not a published seed article`);
    const at = Math.min(Date.parse(article.publishedAt) + comment.minutesAfter * MINUTE, now - MINUTE);
    await runtime.store.comments.insert({
      id: randomUUID(),
      articleId: article.id,
      authorName: comment.authorName,
      authorEmail: comment.authorEmail,
      content: comment.content,
      status: comment.status,
      createdAt: iso(at),
    });
  }
  return fixtures.comments.length;
}

async function seedSourcesAndSubscribers(runtime: Runtime, fixtures: SeedFixtures, now: number): Promise<void> {
  for (const source of fixtures.sources) {
    // Disabled: a demo must never fetch the (fictional) feeds.
    await runtime.store.sources.insert({
      id: randomUUID(),
      name: source.name,
      type: source.type,
      url: source.url,
      section: source.section,
      enabled: false,
      createdAt: iso(now - source.daysAgo * DAY),
    });
  }
  for (const subscriber of fixtures.subscribers) {
    const token = new Uint8Array(20);
    crypto.getRandomValues(token);
    await runtime.store.subscribers.upsert({
      id: randomUUID(),
      email: subscriber.email,
      token: encodeBase32LowerCaseNoPadding(token),
      createdAt: iso(now - subscriber.daysAgo * DAY),
    });
  }
}

/**
 * Fills an empty store with demo content so the reader pages look like a live news site on first
 * start. Page regeneration is not triggered: the build that follows renders everything.
 */
export async function seedDemoContent(runtime: Runtime, options: SeedOptions = {}): Promise<string> {
  const fixtures = loadSeedFixtures(options.fixturesDir);
  const now = Math.floor((options.now ?? new Date()).getTime() / MINUTE) * MINUTE;
  const heroes = await generateHeroImages(runtime, fixtures);
  const records = await seedArticles(runtime, fixtures, heroes, now);
  const comments = await seedComments(runtime, fixtures, records, now);
  await seedSourcesAndSubscribers(runtime, fixtures, now);
  // The dashboard's charts (issue 33): 90 days of views, written as the recorder would have, and of sign-ups.
  const views = await seedViewHistory(runtime.store.analytics, records, runtime.config.BRIEFING_TZ, now);
  const signUps = await seedSubscriberHistory(runtime.store.subscribers, now);
  const subscribers = fixtures.subscribers.length + signUps;
  // The Members tab and the Overview's member charts (issue 48).
  const members = await seedMemberHistory(runtime.store.members, now);
  return `${records.length} articles, ${comments} comments, ${fixtures.sources.length} sources, ${subscribers} subscribers, ${members} members, ${heroes.size} hero images, ${views} page views over 90 days`;
}
