/** Tags and authors as readers browse them (issue 35): the one slug rule, the curation record and the tag API's inputs. */
import { z } from './zod.ts';
import { MAX_TERM_SLUG_LENGTH, slugifyTerm } from './term-slug.ts';

export { slugifyTags, slugifyTerm, TERM_KINDS, termPath, type TermKind } from './term-slug.ts';

/** A term slug as it may appear in a path (what slugifyTerm makes). */
export const termSlugSchema = z
  .string()
  .min(1)
  .max(MAX_TERM_SLUG_LENGTH)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'Expected a tag slug (lowercase words joined by hyphens)');

/**
 * What editors decided about tags, kept as one record in the store's meta (so it survives rebuilds
 * and is shared by every server): merged tags (old slug -> the slug it now lives under, answered
 * with a 301) and hidden ones (no page, no link, not in the sitemaps).
 */
export const tagRulesSchema = z.object({
  merged: z
    .record(z.string(), z.object({ into: z.string(), name: z.string().optional(), at: z.string(), by: z.string().optional() }))
    .default({}),
  hidden: z.record(z.string(), z.object({ at: z.string(), by: z.string().optional() })).default({}),
});
export type TagRules = z.infer<typeof tagRulesSchema>;

export const EMPTY_TAG_RULES: TagRules = Object.freeze({ merged: {}, hidden: {} }) as TagRules;

/** Where a tag slug's page lives: itself, the tag it was merged into (following a chain), or nowhere (hidden). */
export function resolveTagSlug(rules: TagRules, slug: string): { slug: string; redirected: boolean } | undefined {
  let current = slug;
  const seen = new Set<string>();
  while (rules.merged[current] && !seen.has(current)) {
    seen.add(current);
    current = rules.merged[current]!.into;
  }
  if (rules.hidden[current]) return undefined;
  return { slug: current, redirected: current !== slug };
}

/**
 * An article's tags with merged ones replaced by the spelling of the tag they were merged into
 * (feeds keep sending the old spelling), duplicates by slug dropped.
 */
export function mapMergedTags(tags: readonly string[], rules: TagRules): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const tag of tags) {
    let slug = slugifyTerm(tag);
    let name = tag;
    for (let hops = 0; rules.merged[slug] && hops < 10; hops++) {
      const entry = rules.merged[slug]!;
      slug = entry.into;
      name = entry.name ?? entry.into;
    }
    if (seen.has(slug)) continue;
    seen.add(slug);
    out.push(name);
  }
  return out;
}

/** Whether a tag has a page of its own (not merged away, not hidden). */
export function hasTagPage(rules: TagRules, slug: string): boolean {
  return slug !== '' && !rules.merged[slug] && !rules.hidden[slug];
}

/** POST /api/tags/merge: every article tagged `from` is retagged with `into` (its text as shown on `into`'s page). */
export const tagMergeInputSchema = z.strictObject({
  from: termSlugSchema,
  into: termSlugSchema,
});
export type TagMergeInput = z.infer<typeof tagMergeInputSchema>;

/** PUT /api/tags/{slug}: hide or show a tag. */
export const tagUpdateInputSchema = z.strictObject({
  hidden: z.boolean(),
});
export type TagUpdateInput = z.infer<typeof tagUpdateInputSchema>;

/** A tag as the dashboard lists it. */
export const tagSummarySchema = z.object({
  slug: z.string(),
  /** The most used spelling. */
  name: z.string(),
  /** Published articles carrying it. */
  count: z.number().int().min(0),
  hidden: z.boolean(),
});
export type TagSummary = z.infer<typeof tagSummarySchema>;

/** GET /api/tags. */
export const tagListSchema = z.object({
  tags: z.array(tagSummarySchema),
  merged: z.array(z.object({ from: z.string(), into: z.string(), at: z.string() })),
});
export type TagList = z.infer<typeof tagListSchema>;
