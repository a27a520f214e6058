/**
 * Issue 35's logic: the one slug rule for tags and authors, the tag rules (merges, hidden tags), the
 * related-reading ranking, and the store's tag and author listings on a real store (lowdb, or
 * PostgreSQL with TEST_STORE=pg), where the related reading read by windows must equal the one the
 * rebuild computes in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasTagPage, resolveTagSlug, slugifyTags, slugifyTerm, type TagRules } from '../../src/schemas/taxonomy.ts';
import { compareRecent, computeAllRelated, listRelated, listShowingPages, rankRelated, RELATED_COUNT } from '../../src/server/related.ts';
import { mergedTagLocation } from '../../src/server/archive-pages.ts';
import { retag } from '../../src/server/tags.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import type { Store } from '../../src/store/types.ts';
import { articleRecord, closeQuietly, makeRuntime } from './support.ts';

const NO_RULES: TagRules = { merged: {}, hidden: {} };

describe('term slugs', () => {
  it('folds case, accents, punctuation and spaces into one slug, so spellings share a page', () => {
    expect(slugifyTerm('Climate change')).toBe('climate-change');
    expect(slugifyTerm('  climate-change ')).toBe('climate-change');
    expect(slugifyTerm('CLIMATE   CHANGE!')).toBe('climate-change');
    expect(slugifyTerm('Tomás Álvarez')).toBe('tomas-alvarez');
    expect(slugifyTerm('Women’s football')).toBe('women-s-football');
    expect(slugifyTerm('R&D')).toBe('r-and-d');
    expect(slugifyTerm('AI')).toBe('ai');
  });

  it('gives no slug (no page, no link) for text without a letter or digit, and caps the length', () => {
    expect(slugifyTerm('!!!')).toBe('');
    expect(slugifyTerm('')).toBe('');
    expect(slugifyTerm('日本')).toBe('');
    const long = slugifyTerm('word '.repeat(40));
    expect(long.length).toBeLessThanOrEqual(60);
    expect(long).not.toMatch(/-$/);
  });

  it('lists an article’s distinct tag slugs in order', () => {
    expect(slugifyTags(['Energy', 'climate', 'ENERGY', '', '??', 'Climate'])).toEqual(['energy', 'climate']);
  });
});

describe('tag rules', () => {
  const rules: TagRules = {
    merged: { 'heat-wave': { into: 'heatwave', at: 'x' }, 'hot-spell': { into: 'heat-wave', at: 'x' } },
    hidden: { junk: { at: 'x' } },
  };

  it('follows merges to the tag that has the page, and hides hidden tags', () => {
    expect(resolveTagSlug(rules, 'heat-wave')).toEqual({ slug: 'heatwave', redirected: true });
    expect(resolveTagSlug(rules, 'hot-spell')).toEqual({ slug: 'heatwave', redirected: true });
    expect(resolveTagSlug(rules, 'heatwave')).toEqual({ slug: 'heatwave', redirected: false });
    expect(resolveTagSlug(rules, 'junk')).toBeUndefined();
    expect(hasTagPage(rules, 'heatwave')).toBe(true);
    expect(hasTagPage(rules, 'heat-wave')).toBe(false);
    expect(hasTagPage(rules, 'junk')).toBe(false);
  });

  it('redirects a merged tag’s page, archive files and feed, and nothing else', () => {
    expect(mergedTagLocation(rules, '/tag/heat-wave')).toBe('/tag/heatwave');
    expect(mergedTagLocation(rules, '/tag/heat-wave/')).toBe('/tag/heatwave');
    expect(mergedTagLocation(rules, '/tag/heat-wave/page/7')).toBe('/tag/heatwave');
    expect(mergedTagLocation(rules, '/tag/heat-wave/rss.xml')).toBe('/tag/heatwave/rss.xml');
    expect(mergedTagLocation(rules, '/tag/hot-spell')).toBe('/tag/heatwave');
    expect(mergedTagLocation(rules, '/tag/heatwave')).toBeUndefined();
    expect(mergedTagLocation(rules, '/tag/unknown')).toBeUndefined();
    expect(mergedTagLocation(rules, '/author/heat-wave')).toBeUndefined();
  });

  it('retags an article once, keeping its other tags and their order', () => {
    expect(retag(['Heat Wave', 'Cities', 'heat-wave'], 'heat-wave', 'Heatwave')).toEqual(['Heatwave', 'Cities']);
    expect(retag(['heat wave', 'Heatwave'], 'heat-wave', 'Heatwave')).toEqual(['Heatwave']);
  });
});

describe('related ranking', () => {
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
  const make = (
    id: string,
    minute: number,
    tags: string[],
    section: ArticleRecord['section'] = 'world',
    status: ArticleRecord['status'] = 'published',
  ) => articleRecord({ id, slug: id, tags, section, status, publishedAt: at(minute), updatedAt: at(minute) });

  it('ranks by shared tags, then section, then recency; never itself or an unpublished article; at most four', () => {
    const self = make('self', 100, ['climate', 'energy', 'cities']);
    const candidates = [
      self,
      make('two-tags-old', 1, ['Climate', 'ENERGY'], 'tech'),
      make('one-tag-same-section', 50, ['cities']),
      make('one-tag-other-section-newer', 60, ['energy'], 'tech'),
      make('none-same-section', 90, []),
      make('none-other-section', 95, [], 'tech'),
      make('draft-three-tags', 99, ['climate', 'energy', 'cities'], 'world', 'draft'),
    ];
    expect(rankRelated(self, candidates, NO_RULES).map((a) => a.id)).toEqual([
      'two-tags-old',
      'one-tag-same-section',
      'one-tag-other-section-newer',
      'none-same-section',
    ]);
    expect(rankRelated(self, candidates, NO_RULES)).toHaveLength(RELATED_COUNT);
  });

  it('does not count a hidden tag', () => {
    const self = make('h-self', 100, ['junk', 'cities']);
    const junk = make('h-junk', 10, ['junk'], 'tech');
    const city = make('h-city', 5, ['cities'], 'tech');
    expect(rankRelated(self, [junk, city], NO_RULES).map((a) => a.id)).toEqual(['h-junk', 'h-city']);
    expect(rankRelated(self, [junk, city], { merged: {}, hidden: { junk: { at: 'x' } } }).map((a) => a.id)).toEqual(['h-city', 'h-junk']);
  });
});

describe('tag and author listings in the store, and related reading by windows', () => {
  let runtime: Awaited<ReturnType<typeof makeRuntime>>;
  const records: ArticleRecord[] = [];
  const at = (minute: number) => new Date(Date.UTC(2026, 1, 1, 0, minute)).toISOString();

  beforeAll(async () => {
    runtime = await makeRuntime();
    const tags = [
      ['Climate'],
      ['climate', 'Energy'],
      ['energy'],
      ['Cities', 'climate'],
      [],
      ['cities'],
      ['Climate Change'],
      ['climate change', 'energy'],
    ];
    const authors = ['Ana Núñez', 'ana nunez', 'Bo Li', '', 'Bo Li', 'Ana Nunez', 'Cy', 'Cy'];
    for (let i = 0; i < 40; i++) {
      const record = articleRecord({
        id: `s-${String(i).padStart(2, '0')}`,
        slug: `s-${i}`,
        tags: tags[i % tags.length]!,
        authorName: authors[i % authors.length]!,
        section: i % 3 === 0 ? 'tech' : 'world',
        // Every fifth shares its minute with the one before: ties are told apart by id.
        publishedAt: at(i - (i % 5 === 4 ? 1 : 0)),
        updatedAt: at(i),
        status: i % 11 === 10 ? 'draft' : 'published',
      });
      records.push(record);
      await runtime.store.articles.insert(record);
    }
  });

  afterAll(async () => {
    await closeQuietly(runtime?.store);
  });

  const published = () => records.filter((r) => r.status === 'published').sort(compareRecent);

  it('lists a tag’s and an author’s published articles by slug, newest first, whatever the spelling', async () => {
    const climate = published().filter((r) => r.tags.some((t) => slugifyTerm(t) === 'climate'));
    const listed = await runtime.store.articles.list({ statuses: ['published'], tag: 'climate' }, { offset: 0, limit: 100 }, 'recent');
    expect(listed.map((r) => r.id)).toEqual(climate.map((r) => r.id));
    expect(await runtime.store.articles.count({ statuses: ['published'], tag: 'climate' })).toBe(climate.length);
    const ana = published().filter((r) => slugifyTerm(r.authorName) === 'ana-nunez');
    const byAna = await runtime.store.articles.list({ statuses: ['published'], author: 'ana-nunez' }, { offset: 2, limit: 3 }, 'recent');
    expect(byAna.map((r) => r.id)).toEqual(ana.slice(2, 5).map((r) => r.id));
    expect(await runtime.store.articles.count({ statuses: ['published'], tag: 'nothing-here' })).toBe(0);
  });

  it('answers every term with its count and its newest article’s spelling', async () => {
    const tags = await runtime.store.articles.terms('tag');
    const climate = published().filter((r) => r.tags.some((t) => slugifyTerm(t) === 'climate'));
    expect(tags.find((t) => t.slug === 'climate')).toEqual({
      slug: 'climate',
      count: climate.length,
      name: climate[0]!.tags.find((t) => slugifyTerm(t) === 'climate'),
    });
    expect(tags.map((t) => t.slug)).toEqual(['cities', 'climate', 'climate-change', 'energy']);
    const authors = await runtime.store.articles.terms('author');
    expect(authors.map((t) => t.slug)).toEqual(['ana-nunez', 'bo-li', 'cy']);
  });

  it('follows writes: an unpublished or retagged article leaves the tag’s list', async () => {
    const target = published().find((r) => r.tags.includes('Climate'))!;
    const before = await runtime.store.articles.count({ statuses: ['published'], tag: 'climate' });
    await runtime.store.articles.replace({ ...target, tags: ['Elsewhere'] });
    expect(await runtime.store.articles.count({ statuses: ['published'], tag: 'climate' })).toBe(before - 1);
    expect(await runtime.store.articles.count({ statuses: ['published'], tag: 'elsewhere' })).toBe(1);
    await runtime.store.articles.replace({ ...target, tags: target.tags, status: 'draft' });
    expect(await runtime.store.articles.count({ statuses: ['published'], tag: 'elsewhere' })).toBe(0);
    await runtime.store.articles.replace({ ...target, version: undefined });
    expect(await runtime.store.articles.count({ statuses: ['published'], tag: 'climate' })).toBe(before);
  });

  it('reads the same related reading by windows as the rebuild computes in memory, and finds every page that shows an article', async () => {
    await expectWindowsMatchMemory(runtime.store, published());
  });
});

describe('related reading in a burst of articles sharing one date', () => {
  // A feed dating its items to the second (or to the day) gives dozens of articles one date.
  let runtime: Awaited<ReturnType<typeof makeRuntime>>;
  const records: ArticleRecord[] = [];

  beforeAll(async () => {
    runtime = await makeRuntime();
    for (let i = 0; i < 36; i++) {
      const minute = i < 3 ? i : i < 33 ? 3 : i;
      const record = articleRecord({
        id: `b-${String((i * 7) % 36).padStart(2, '0')}`,
        slug: `b-${i}`,
        tags: i % 2 ? ['Wire'] : [],
        section: 'world',
        publishedAt: new Date(Date.UTC(2026, 1, 1, 0, minute)).toISOString(),
        status: 'published',
      });
      records.push(record);
      await runtime.store.articles.insert(record);
    }
  });

  afterAll(async () => {
    await closeQuietly(runtime?.store);
  });

  it('reads past the whole burst, both ways, as the rebuild does in memory', async () => {
    await expectWindowsMatchMemory(runtime.store, [...records].sort(compareRecent));
  });
});

/**
 * Every published article's related reading read by windows equals computeAllRelated's, and every
 * page whose list shows an article is among those listShowingPages names for it.
 */
async function expectWindowsMatchMemory(store: Store, all: ArticleRecord[]): Promise<void> {
  const inMemory = computeAllRelated(all, NO_RULES);
  for (const article of all) {
    const read = await listRelated(store, article, NO_RULES);
    expect(
      read.map((r) => r.id),
      article.id,
    ).toEqual(inMemory.get(article.id)!.map((r) => r.id));
    expect(read.some((r) => r.id === article.id)).toBe(false);
  }
  for (const shown of all) {
    const showing = new Set((await listShowingPages(store, shown, NO_RULES)).map((r) => r.id));
    for (const article of all)
      if (inMemory.get(article.id)!.some((r) => r.id === shown.id))
        expect(showing.has(article.id), `${article.id} shows ${shown.id}`).toBe(true);
  }
}

describe('merged tags from feeds', () => {
  it('maps a merged tag to the spelling of the tag it was merged into, following chains, once per slug', async () => {
    const { mapMergedTags } = await import('../../src/schemas/taxonomy.ts');
    const rules: TagRules = {
      merged: {
        'heat-wave': { into: 'heatwave', name: 'Heatwave', at: 'x' },
        'hot-spell': { into: 'heat-wave', name: 'Heat wave', at: 'x' },
      },
      hidden: {},
    };
    expect(mapMergedTags(['Heat Wave', 'Cities'], rules)).toEqual(['Heatwave', 'Cities']);
    expect(mapMergedTags(['hot spell', 'heatwave', 'HEAT-WAVE'], rules)).toEqual(['Heatwave']);
    expect(mapMergedTags(['Cities'], NO_RULES)).toEqual(['Cities']);
  });
});
