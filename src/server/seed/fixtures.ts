/** Reads and validates the committed demo fixtures under data/seed/ (articles per section, comments, sources, subscribers). */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { sectionSchema } from '../../schemas/common.ts';
import { sourceTypeSchema } from '../../schemas/source.ts';
import { commentStatusSchema } from '../../schemas/comment.ts';

/** data/seed/ of this checkout; the working directory is the fallback when this module was bundled elsewhere. */
export function locateSeedDir(): string {
  const beside = fileURLToPath(new URL('../../../data/seed/', import.meta.url));
  return fs.existsSync(beside) ? beside : path.resolve('data/seed');
}

const seedArticleSchema = z
  .strictObject({
    title: z.string().min(1),
    dek: z.string().min(1),
    author: z.string().min(1),
    tags: z.array(z.string().min(1)).min(1),
    /** How long before seeding it was published (drafts and scheduled: last edited). */
    hoursAgo: z
      .number()
      .positive()
      .max(24 * 30),
    breaking: z.boolean().default(false),
    editorsPick: z.boolean().default(false),
    status: z.enum(['published', 'draft', 'scheduled', 'archived']).default('published'),
    /** Scheduled articles only: how long after seeding they go live. */
    scheduledInHours: z.number().positive().optional(),
    source: z.strictObject({ label: z.string().min(1), url: z.url({ protocol: /^https$/ }) }).optional(),
    /** Hero image variant of the section; null for an article without a hero image. */
    image: z.number().int().min(0).nullable().optional(),
    /** Body blocks (HTML on the article allow-list), joined by newlines. */
    body: z.array(z.string().min(1)).min(3),
  })
  .refine(
    (a) => (a.status === 'scheduled') === (a.scheduledInHours !== undefined),
    'scheduledInHours is required for, and only for, scheduled articles',
  );
export type SeedArticle = z.infer<typeof seedArticleSchema>;

const sectionFileSchema = z.strictObject({ section: sectionSchema, articles: z.array(seedArticleSchema).min(1) });

const seedCommentSchema = z.strictObject({
  /** Slug of the article, as generated from its title. */
  article: z.string().min(1),
  authorName: z.string().min(1).max(100),
  authorEmail: z.email(),
  content: z.string().min(1).max(5000),
  status: commentStatusSchema.default('visible'),
  minutesAfter: z.number().int().positive(),
});
export type SeedComment = z.infer<typeof seedCommentSchema>;

const seedSourceSchema = z.strictObject({
  name: z.string().min(1),
  type: sourceTypeSchema,
  url: z.url({ protocol: /^https?$/ }),
  section: sectionSchema,
  daysAgo: z.number().positive(),
});
export type SeedSource = z.infer<typeof seedSourceSchema>;

const seedSubscriberSchema = z.strictObject({ email: z.email(), daysAgo: z.number().positive() });
export type SeedSubscriber = z.infer<typeof seedSubscriberSchema>;

export type SeedFixtures = {
  sections: Array<z.infer<typeof sectionFileSchema>>;
  comments: SeedComment[];
  sources: SeedSource[];
  subscribers: SeedSubscriber[];
};

function readJson<T>(file: string, schema: z.ZodType<T>): T {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot read seed fixture ${file}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid seed fixture ${file}:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** All fixtures, sections in file-name order so the seed is the same on every run. */
export function loadSeedFixtures(dir: string = locateSeedDir()): SeedFixtures {
  const articlesDir = path.join(dir, 'articles');
  const files = fs
    .readdirSync(articlesDir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  return {
    sections: files.map((f) => readJson(path.join(articlesDir, f), sectionFileSchema)),
    comments: readJson(path.join(dir, 'comments.json'), z.strictObject({ comments: z.array(seedCommentSchema) })).comments,
    sources: readJson(path.join(dir, 'sources.json'), z.strictObject({ sources: z.array(seedSourceSchema) })).sources,
    subscribers: readJson(path.join(dir, 'subscribers.json'), z.strictObject({ subscribers: z.array(seedSubscriberSchema) })).subscribers,
  };
}
