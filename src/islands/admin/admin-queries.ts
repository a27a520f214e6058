/** Query keys and cache invalidation shared by the admin dashboard and the editor. */
import type { QueryClient } from '@tanstack/react-query';
import type { QueryParams } from '../../lib/api-client.ts';

export const ARTICLE_MANAGER_PAGE_SIZE = 12;
export const ADMIN_COMMENTS_PAGE_SIZE = 20;
export const RECENT_ARTICLES_LIMIT = 10;
export const ADMIN_SUBSCRIBERS_PAGE_SIZE = 25;
export const ADMIN_MEMBERS_PAGE_SIZE = 25;

/** Keys follow the shared default query function: [path] or [path, query params] or [path, id]. */
export const adminKeys = {
  stats: () => ['/api/articles/stats'] as const,
  articles: (params: QueryParams) => ['/api/articles', params] as const,
  articleCount: (params: QueryParams) => ['/api/articles/count', params] as const,
  article: (id: string) => ['/api/articles', id] as const,
  comments: (params: QueryParams) => ['/api/admin/comments', params] as const,
  commentCount: (params: QueryParams) => ['/api/admin/comments/count', params] as const,
  sources: () => ['/api/news-sources'] as const,
  fetchProgress: () => ['/api/news-sources/progress'] as const,
  subscribers: (params: QueryParams) => ['/api/newsletter/subscribers', params] as const,
  briefingPreview: () => ['/api/newsletter/briefing/preview'] as const,
  trash: () => ['/api/trash'] as const,
  publishing: () => ['/api/publishing'] as const,
  tags: () => ['/api/tags'] as const,
  members: (params: QueryParams) => ['/api/members', params] as const,
  member: (id: string) => ['/api/members', id] as const,
  memberStats: (from: string, to: string) => ['/api/members/stats', { from, to }] as const,
  memberPlans: () => ['/api/members/plans'] as const,
  memberSettings: () => ['/api/members/settings'] as const,
};

function keyStartsWith(prefix: string) {
  return ({ queryKey }: { queryKey: readonly unknown[] }) => typeof queryKey[0] === 'string' && queryKey[0].startsWith(prefix);
}

/** After any article write: every list, count, item and the stats are stale. */
export function invalidateArticles(client: QueryClient): Promise<void> {
  // A delete moves an article to the trash (issue 14), so the trash is stale too.
  return client.invalidateQueries({ predicate: (q) => keyStartsWith('/api/articles')(q) || keyStartsWith('/api/trash')(q) });
}

export function invalidateComments(client: QueryClient): Promise<void> {
  return client.invalidateQueries({ predicate: keyStartsWith('/api/admin/comments') });
}

export function invalidateSources(client: QueryClient): Promise<void> {
  return client.invalidateQueries({ predicate: keyStartsWith('/api/news-sources') });
}

export function invalidateSubscribers(client: QueryClient): Promise<void> {
  return client.invalidateQueries({ predicate: keyStartsWith('/api/newsletter/subscribers') });
}

/** After a comp: the list, the member's page, their counts and the Overview's member figures are stale. */
export function invalidateMembers(client: QueryClient): Promise<void> {
  return client.invalidateQueries({ predicate: keyStartsWith('/api/members') });
}
