/**
 * Writes a realistic N-article newsroom into a DATA_DIR through the Store: records built by the domain as an editor's saves
 * build them, stored with the store's bulk loads (`articles.insertMany`, `counters.importVotes`), and counted back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../src/config.ts';
import { articleInputSchema, type ArticleInput, type ArticleRecord } from '../src/schemas/article.ts';
import { SECTIONS, type Section } from '../src/schemas/common.ts';
import { buildArticle } from '../src/server/articles.ts';
import { startRuntime, stopRuntime } from '../src/server/app.ts';
import { openStore, type VoteRecord } from '../src/store/index.ts';
import { HERO_VARIANTS, renderHeroSvg, writeHeroImage } from '../src/server/seed/hero-images.ts';

/** Topic words per section: titles, tags and bodies draw on them, so search queries find plausible sets. */
const TOPICS: Record<Section, { nouns: string[]; tags: string[] }> = {
  world: {
    nouns: ['ceasefire', 'summit', 'border', 'refugees', 'embassy', 'drought', 'earthquake', 'treaty', 'monsoon', 'sanctions'],
    tags: ['diplomacy', 'climate', 'conflict', 'migration', 'united nations'],
  },
  business: {
    nouns: [
      'inflation',
      'merger',
      'earnings',
      'startup',
      'pension',
      'interest rates',
      'supply chain',
      'shipping',
      'retail',
      'housing market',
    ],
    tags: ['markets', 'economy', 'central bank', 'jobs', 'energy'],
  },
  politics: {
    nouns: ['election', 'parliament', 'budget', 'coalition', 'referendum', 'senate', 'campaign', 'minister', 'reform', 'poll'],
    tags: ['elections', 'policy', 'government', 'courts', 'tax'],
  },
  tech: {
    nouns: [
      'chip',
      'satellite',
      'encryption',
      'battery',
      'robotics',
      'browser',
      'quantum computer',
      'data centre',
      'smartphone',
      'open source',
    ],
    tags: ['ai', 'privacy', 'space', 'security', 'gadgets'],
  },
  sports: {
    nouns: ['final', 'striker', 'marathon', 'transfer', 'championship', 'coach', 'derby', 'olympics', 'tennis', 'cricket'],
    tags: ['football', 'athletics', 'tennis', 'cycling', 'olympics'],
  },
  culture: {
    nouns: ['festival', 'gallery', 'novel', 'orchestra', 'premiere', 'museum', 'documentary', 'theatre', 'album', 'exhibition'],
    tags: ['books', 'music', 'film', 'art', 'theatre'],
  },
  opinion: {
    nouns: [
      'democracy',
      'housing',
      'education',
      'transport',
      'healthcare',
      'free speech',
      'public libraries',
      'cities',
      'climate policy',
      'journalism',
    ],
    tags: ['column', 'editorial', 'letters', 'analysis', 'debate'],
  },
  home: {
    nouns: ['garden', 'kitchen', 'recipe', 'renovation', 'heating', 'allotment', 'furniture', 'pets', 'cycling commute', 'weekend'],
    tags: ['living', 'food', 'gardening', 'family', 'money'],
  },
};
const PLACES = [
  'Lisbon',
  'Nairobi',
  'Osaka',
  'Montreal',
  'Valparaiso',
  'Tallinn',
  'Accra',
  'Hobart',
  'Bergen',
  'Marseille',
  'Cordoba',
  'Dundee',
  'Pune',
  'Tromso',
  'Gdansk',
  'Recife',
];
const PEOPLE = [
  'Amara Okafor',
  'Lena Fischer',
  'Tomas Novak',
  'Priya Raman',
  'Diego Alvarez',
  'Sofia Lindqvist',
  'Kwame Mensah',
  'Hana Sato',
  'Marek Zielinski',
  'Ines Duarte',
];
const VERBS = ['faces', 'approves', 'rejects', 'delays', 'unveils', 'questions', 'expands', 'cuts', 'defends', 'rethinks'];
const FILLER = (
  'officials said the plan would be reviewed again next month after residents raised concerns at a crowded public meeting ' +
  'while analysts cautioned that the figures released on Tuesday were preliminary and could be revised as more data arrives ' +
  'several people who spoke on condition of anonymity described weeks of negotiations that at times seemed close to collapse ' +
  'the decision follows a long period of uncertainty in which costs rose steadily and confidence among local businesses fell ' +
  'critics argue that the timetable is unrealistic and that the people most affected were not consulted early enough ' +
  'supporters counter that waiting any longer would only make the eventual changes more painful and more expensive ' +
  'in interviews across the region many described a mixture of relief and scepticism about what happens next ' +
  'the report draws on records obtained through freedom of information requests and on conversations with former staff'
).split(' ');

/** A small seeded generator (mulberry32): the same N gives the same store on every run. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function sentence(random: Random, section: Section): string {
  const topic = TOPICS[section];
  const words: string[] = [];
  const length = 12 + Math.floor(random() * 14);
  const start = Math.floor(random() * FILLER.length);
  for (let i = 0; i < length; i++) words.push(FILLER[(start + i) % FILLER.length]!);
  // Topic words and names woven in, so each article is about something a reader would search for.
  words.splice(Math.floor(random() * words.length), 0, pick(random, topic.nouns));
  if (random() < 0.4) words.splice(Math.floor(random() * words.length), 0, `in ${pick(random, PLACES)}`);
  if (random() < 0.3) words.push(`according to ${pick(random, PEOPLE)}`);
  return `${capitalize(words.join(' '))}.`;
}

/** A body of 600-1,500 words: paragraphs, subheads, a pull quote and an inline image. */
function bodyOf(random: Random, section: Section, image: string | undefined): { html: string; words: number } {
  const target = 600 + Math.floor(random() * 901);
  const parts: string[] = [];
  let words = 0;
  let paragraphs = 0;
  while (words < target) {
    const sentences: string[] = [];
    const count = 3 + Math.floor(random() * 4);
    for (let s = 0; s < count && words < target; s++) {
      const text = sentence(random, section);
      words += text.split(' ').length;
      sentences.push(text);
    }
    parts.push(`<p>${sentences.join(' ')}</p>`);
    paragraphs++;
    if (paragraphs === 3 && image)
      parts.push(
        `<figure><img src="${image.replace(/\/\d+\.webp$/, '/800.webp')}" loading="lazy" alt="${capitalize(pick(random, TOPICS[section].nouns))} in ${pick(random, PLACES)}"><figcaption>${sentence(random, section)}</figcaption></figure>`,
      );
    if (paragraphs % 4 === 0) parts.push(`<h2>${capitalize(pick(random, TOPICS[section].nouns))} and what comes next</h2>`);
    if (paragraphs === 5) parts.push(`<blockquote><p>${sentence(random, section)}</p></blockquote>`);
  }
  return { html: parts.join('\n'), words };
}

/** One article's editor input, numbered i. */
export function articleInputFor(random: Random, i: number, section: Section, heroImages: Map<string, string>): ArticleInput {
  const topic = TOPICS[section];
  const image = random() < 0.9 ? heroImages.get(`${section}:${Math.floor(random() * HERO_VARIANTS)}`) : undefined;
  const noun = pick(random, topic.nouns);
  const title = `${capitalize(pick(random, PLACES))} ${pick(random, VERBS)} ${noun} ${pick(random, ['plan', 'deal', 'vote', 'report', 'row', 'bid', 'rules'])} (${i + 1})`;
  const tags = [...new Set([pick(random, topic.tags), pick(random, topic.tags), noun])].slice(0, 2 + Math.floor(random() * 2));
  return articleInputSchema.parse({
    title,
    dek: `${sentence(random, section)}`.slice(0, 300),
    bodyHtml: bodyOf(random, section, image).html,
    heroImage: image,
    section,
    tags,
    authorName: pick(random, PEOPLE),
    isEditorsPick: random() < 0.02,
    isBreaking: false,
    status: 'published',
  });
}

/** Renders every section's hero variants once (they are shared by all articles); answers paths by "section:variant". */
async function writeHeroImages(dataDir: string): Promise<Map<string, string>> {
  const imagesDir = path.join(path.resolve(dataDir), 'images');
  const entries: Array<readonly [string, string]> = [];
  for (const section of SECTIONS) {
    const variants = await Promise.all(
      Array.from({ length: HERO_VARIANTS }, (_, v) => writeHeroImage(imagesDir, renderHeroSvg(section, v))),
    );
    variants.forEach((p, v) => entries.push([`${section}:${v}`, p] as const));
  }
  return new Map(entries);
}

export type GeneratedStore = { articles: number; words: number; ms: number; bytes: number; images: number; ids: string[] };

/**
 * Generates `count` published articles over all sections into `dataDir`. Each record is built by
 * the domain (buildArticle: sanitising, slug, reading time), as an API save builds it, and stored
 * through the Store in batches (`insertMany`), so 100,000 articles never sit in memory at once.
 */
export async function generateStore(dataDir: string, count: number, log: (line: string) => void): Promise<GeneratedStore> {
  const started = performance.now();
  const heroImages = await writeHeroImages(dataDir);
  // Opening the runtime marks the empty folder as layout 2 and gives it its store id.
  const runtime = await startRuntime(parseConfig({ DATA_DIR: dataDir, SEED: 'none' }));
  const random = createRandom(count);
  let batch: ArticleRecord[] = [];
  const ids: string[] = [];
  let words = 0;
  let bytes = 0;
  // Spread over a year up to now, oldest first, as they would have been published.
  const span = 365 * 24 * 3600_000;
  const begin = Date.now() - span;
  try {
    for (let i = 0; i < count; i++) {
      const section = SECTIONS[i % SECTIONS.length]!;
      const input = articleInputFor(random, i, section, heroImages);
      const at = new Date(begin + Math.floor((span * i) / count)).toISOString();
      // Titles carry their number, so slugs are unique without asking the (still empty) store.
      const article = await buildArticle(runtime, input, at);
      batch.push(article);
      ids.push(article.id);
      words += (input.bodyHtml ?? '')
        .replace(/<[^>]+>/g, ' ')
        .split(/\s+/)
        .filter(Boolean).length;
      if (batch.length === 1000 || i === count - 1) {
        await runtime.store.articles.insertMany(batch);
        for (const article of batch) bytes += Buffer.byteLength(JSON.stringify(article));
        batch = [];
      }
      if ((i + 1) % 5000 === 0) log(`  built ${i + 1}/${count} articles (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await stopRuntime(runtime);
  }
  const store = await openStore(dataDir, 'read');
  try {
    const stored = await store.articles.count({ statuses: ['published'] });
    if (stored !== count) throw new Error(`The store reads ${stored} published articles, expected ${count}`);
  } finally {
    await store.close();
  }
  return { articles: count, words: Math.round(words / count), ms: performance.now() - started, bytes, images: heroImages.size, ids };
}

/**
 * Stores `count` votes from distinct visitors through the Store (`counters.importVotes`): a few
 * articles get many (a long tail, as on a real site), most a handful. Answers the time and the vote
 * bucket files the store keeps them in (the lowdb layout; none on PostgreSQL).
 */
export async function generateVotes(dataDir: string, articleIds: readonly string[], count: number): Promise<{ ms: number; files: number }> {
  const started = performance.now();
  const random = createRandom(count + 7);
  const votes: VoteRecord[] = [];
  for (let v = 0; v < count; v++) {
    // Squaring a uniform number favours the first ids: article 0 gets the most votes.
    const articleId = articleIds[Math.floor(random() * random() * articleIds.length)]!;
    const visitorId = `gen${v.toString(36).padStart(23, '0')}`;
    votes.push({ articleId, visitorId, kind: random() < 0.7 ? 'like' : 'dislike' });
  }
  const store = await openStore(dataDir);
  try {
    await store.counters.importVotes(votes);
  } finally {
    await store.close();
  }
  const bucketsDir = path.join(dataDir, 'votes');
  const files = fs.existsSync(bucketsDir)
    ? (fs.readdirSync(bucketsDir, { recursive: true, encoding: 'utf8' }) as string[]).filter((name) => /(^|\/)\d+\.json$/.test(name)).length
    : 0;
  return { ms: performance.now() - started, files };
}
