/** Tag curation (issue 35): the editors' merges and hidden tags, kept as one record in the store's meta, and the pages they touch. */
import type { Store } from '../store/types.ts';
import type { ArticleRecord } from '../schemas/article.ts';
import { slugifyTerm, type TagList, type TagMergeInput } from '../schemas/taxonomy.ts';
import { readTagRules, TAG_RULES_KEY } from './tag-rules.ts';
import type { Runtime } from './runtime.ts';
import type { Actor } from './articles.ts';
import { commitArticle } from './articles.ts';
import { recordAudit } from './audit.ts';
import { badRequest, notFound } from './errors.ts';
import { assertCan } from './permissions.ts';
import { nowIso } from './clock.ts';
import { termPagePaths } from './archive-pages.ts';
import { articlePath } from './publishing/paths.ts';
import { ARCHIVES_SITEMAP_PATH } from './publishing/feeds.ts';

/** Every tag of published articles with its count and whether it is hidden, and the merges in force (GET /api/tags). */
export async function listTags(runtime: Runtime, actor: Actor): Promise<TagList> {
  assertCan(actor, 'tag.manage');
  const rules = await readTagRules(runtime.store);
  const terms = await runtime.store.articles.terms('tag');
  const tags = terms.map((t) => ({ ...t, hidden: Boolean(rules.hidden[t.slug]) }));
  // Hidden tags whose articles are gone stay listed, so they can be shown again.
  for (const slug of Object.keys(rules.hidden))
    if (!tags.some((t) => t.slug === slug)) tags.push({ slug, name: slug, count: 0, hidden: true });
  const merged = Object.entries(rules.merged).map(([from, { into, at }]) => ({ from, into, at }));
  return { tags: tags.sort((a, b) => b.count - a.count || (a.slug < b.slug ? -1 : 1)), merged };
}

/** Every article (any status) carrying a tag slug. */
async function listTagged(store: Store, slug: string): Promise<ArticleRecord[]> {
  const filter = { tag: slug };
  return store.articles.list(filter, { offset: 0, limit: await store.articles.count(filter) }, 'recent');
}

/**
 * Merges tag `from` into `into`: every article carrying `from` is retagged with `into`'s spelling (a
 * save each, so its pages and the tag pages follow as for any edit), and `from` is recorded as merged,
 * so its old addresses answer 301 to `into`'s.
 */
export async function mergeTags(runtime: Runtime, input: TagMergeInput, actor: Actor): Promise<{ retagged: number }> {
  assertCan(actor, 'tag.manage');
  const { from, into } = input;
  if (from === into) throw badRequest('A tag cannot be merged into itself', [{ path: ['into'], message: 'Choose another tag' }]);
  const rules = await readTagRules(runtime.store);
  if (rules.merged[into])
    throw badRequest(`"${into}" was merged into "${rules.merged[into]!.into}"`, [
      { path: ['into'], message: 'Choose the tag it was merged into' },
    ]);
  const tagged = await listTagged(runtime.store, from);
  const targets = await listTagged(runtime.store, into);
  if (tagged.length === 0 && !rules.hidden[from]) throw notFound('Tag');
  if (targets.length === 0) throw badRequest(`No article carries "${into}"`, [{ path: ['into'], message: 'Choose a tag in use' }]);
  const name = targets[0]?.tags.find((tag) => slugifyTerm(tag) === into) ?? into;
  // Recorded first, so the pages the saves below queue already draw from it.
  const merged = { ...rules.merged, [from]: { into, name, at: nowIso(), by: actor.username } };
  for (const [old, entry] of Object.entries(merged)) if (entry.into === from) merged[old] = { ...entry, into, name };
  const hidden = { ...rules.hidden };
  delete hidden[from];
  await runtime.store.meta.set(TAG_RULES_KEY, { merged, hidden });
  for (const article of tagged) {
    await commitArticle(runtime, article.id, (current) => ({ ...current, tags: retag(current.tags, from, name) }), {
      actor: actor.username,
    });
  }
  await runtime.publishing?.enqueue?.([...termPagePaths('tag', from), ARCHIVES_SITEMAP_PATH]);
  await recordAudit(runtime, {
    actor,
    action: 'tag.merge',
    target: { type: 'tag', id: from, label: from },
    detail: `into ${into}, ${tagged.length} article(s) retagged`,
  });
  return { retagged: tagged.length };
}

/** An article's tags with every spelling of `from` replaced by `name` (once, where the first one was). */
export function retag(tags: readonly string[], from: string, name: string): string[] {
  const out: string[] = [];
  for (const tag of tags) {
    const next = slugifyTerm(tag) === from ? name : tag;
    if (!out.some((t) => slugifyTerm(t) === slugifyTerm(next))) out.push(next);
  }
  return out;
}

/**
 * Hides a tag (no page, no feed, no link, not in the sitemaps) or shows it again. Its pages and every
 * published article carrying it are queued: the articles link the tag, or no longer do.
 */
export async function setTagHidden(
  runtime: Runtime,
  slug: string,
  hidden: boolean,
  actor: Actor,
): Promise<{ slug: string; hidden: boolean }> {
  assertCan(actor, 'tag.manage');
  const rules = await readTagRules(runtime.store);
  if (rules.merged[slug]) throw badRequest(`"${slug}" was merged into "${rules.merged[slug]!.into}"`);
  const published = await runtime.store.articles.list(
    { statuses: ['published'], tag: slug },
    { offset: 0, limit: await runtime.store.articles.count({ statuses: ['published'], tag: slug }) },
    'recent',
  );
  if (published.length === 0 && !rules.hidden[slug]) throw notFound('Tag');
  if (Boolean(rules.hidden[slug]) === hidden) return { slug, hidden };
  const next = { merged: rules.merged, hidden: { ...rules.hidden } };
  if (hidden) next.hidden[slug] = { at: nowIso(), by: actor.username };
  else delete next.hidden[slug];
  await runtime.store.meta.set(TAG_RULES_KEY, next);
  await runtime.publishing?.enqueue?.([
    ...published.map((a) => articlePath(a.slug)),
    ...termPagePaths('tag', slug, published.length),
    ARCHIVES_SITEMAP_PATH,
  ]);
  await recordAudit(runtime, { actor, action: hidden ? 'tag.hide' : 'tag.show', target: { type: 'tag', id: slug, label: slug } });
  return { slug, hidden };
}
