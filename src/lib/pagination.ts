/**
 * Page numbers of a listing (docs/product.md, Limits) and the stable layout of section listings: page files
 * are filled from the oldest article, so a page, once full, never changes, while readers still count
 * pages from the newest.
 */

export type PaginationItem = { kind: 'page'; page: number } | { kind: 'ellipsis'; key: string };

/** Pages with more than this many numbers collapse with ellipses. */
export const PAGINATION_THRESHOLD = 7;

export function listPaginationItems(current: number, total: number): PaginationItem[] {
  if (total <= 1) return [];
  const page = (n: number): PaginationItem => ({ kind: 'page', page: n });
  if (total <= PAGINATION_THRESHOLD) return Array.from({ length: total }, (_, i) => page(i + 1));
  if (current <= 4) return [1, 2, 3, 4, 5].map(page).concat({ kind: 'ellipsis', key: 'end' }, page(total));
  if (current >= total - 3) {
    return [page(1), { kind: 'ellipsis', key: 'start' } as PaginationItem].concat(
      [total - 4, total - 3, total - 2, total - 1, total].map(page),
    );
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

/*
 * Stable listing layout. Page 1 (/section/{s}) holds the newest `size` articles. The rest are cut
 * into pages of `size` from the OLDEST one: file number 2 (/section/{s}/page/2) holds the oldest
 * articles, the highest file number the newest ones (the only page that may be partly filled).
 * A publish therefore changes page 1 and the highest file (and, once per `size` publishes, the
 * file before it, whose "Previous" link moves), never the full pages behind them. Readers count
 * from the newest as before: reader page p lives in file total - p + 2, so both run over 2..total
 * and the set of paths is the one ceil(count / size) pages always had.
 */

/** Number of listing pages for `count` articles (page 1 always exists). */
export function countListingPages(count: number, size: number): number {
  return Math.max(1, Math.ceil(count / size));
}

/** The file number holding reader page `readerPage` when the listing has `total` pages. */
export function fileOfReaderPage(readerPage: number, total: number): number {
  return readerPage <= 1 ? 1 : total - readerPage + 2;
}

/** The reader's page number of file `file` when the listing has `total` pages. */
export function readerPageOfFile(file: number, total: number): number {
  return file <= 1 ? 1 : total - file + 2;
}

/** Which articles (newest first: offset and limit) file `file` shows of `count`; undefined when out of range. */
export function listingSlice(count: number, file: number, size: number): { offset: number; limit: number } | undefined {
  const total = countListingPages(count, size);
  if (!Number.isInteger(file) || file < 1 || file > total) return undefined;
  if (file === 1) return { offset: 0, limit: Math.min(size, count) };
  const rest = count - size;
  const fromOldestEnd = Math.min(size * (file - 1), rest);
  return { offset: count - fromOldestEnd, limit: fromOldestEnd - size * (file - 2) };
}

/**
 * The base path of a listing: a section name stands for `/section/{name}`; a path (`/tag/x`,
 * `/author/x`, issue 35) is its own base, paged the same way.
 */
export function listingBase(listing: string): string {
  return listing.startsWith('/') ? listing : `/section/${listing}`;
}

/** The path of a listing file of a section or other listing (file 1 has no /page/ suffix). */
export function listingFilePath(listing: string, file: number): string {
  const base = listingBase(listing);
  return file <= 1 ? base : `${base}/page/${file}`;
}

/** Where a listing's page count lives: the one listing file every publish may change. */
export function listingManifestPath(listing: string): string {
  return `${listingBase(listing)}/pages.json`;
}
