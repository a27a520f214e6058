/** A published bench story (`bench-N`, slug `bench-story-N`), the record the benches seed their stores with. */
import type { ArticleRecord } from '../src/schemas/article.ts';

export function benchStory(i: number, now: string, overrides: Partial<ArticleRecord> = {}): ArticleRecord {
  return {
    id: `bench-${i}`,
    title: `Bench story ${i}`,
    slug: `bench-story-${i}`,
    dek: 'A line that sums the story up.',
    bodyHtml: '<p>Body</p>',
    section: 'world',
    tags: [],
    authorName: 'Desk',
    createdAt: now,
    updatedAt: now,
    publishedAt: now,
    readingTime: 3,
    isEditorsPick: false,
    isBreaking: false,
    status: 'published',
    ...overrides,
  };
}
