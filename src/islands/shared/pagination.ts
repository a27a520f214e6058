/** The page numbers a pagination control shows (SPEC section 5): all up to 7 pages, a collapsed form with ellipses beyond. */

export type PaginationItem = { kind: 'page'; page: number } | { kind: 'ellipsis'; key: string };

/** Pages with more than this many numbers collapse with ellipses. */
export const PAGINATION_THRESHOLD = 7;

export function listPaginationItems(current: number, total: number): PaginationItem[] {
  if (total <= 1) return [];
  const page = (n: number): PaginationItem => ({ kind: 'page', page: n });
  if (total <= PAGINATION_THRESHOLD) return Array.from({ length: total }, (_, i) => page(i + 1));
  if (current <= 4) return [1, 2, 3, 4, 5].map(page).concat({ kind: 'ellipsis', key: 'end' }, page(total));
  if (current >= total - 3) {
    return [page(1), { kind: 'ellipsis', key: 'start' } as PaginationItem].concat([total - 4, total - 3, total - 2, total - 1, total].map(page));
  }
  return [
    page(1),
    { kind: 'ellipsis', key: 'start' },
    page(current - 1),
    page(current),
    page(current + 1),
    { kind: 'ellipsis', key: 'end' },
    page(total),
  ];
}
