/**
 * Draws the numbered navigation of a section archive page in the browser from the section's
 * pages.json, so the page's HTML never prints the page count and stays the same file for good.
 */
import { listPaginationItems, listingFilePath, listingManifestPath, readerPageOfFile, fileOfReaderPage } from './pagination.ts';

function link(href: string, text: string, attributes: Record<string, string> = {}): HTMLAnchorElement {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  for (const [name, value] of Object.entries(attributes)) a.setAttribute(name, value);
  return a;
}

function disabled(text: string): HTMLSpanElement {
  const span = document.createElement('span');
  span.setAttribute('aria-disabled', 'true');
  span.textContent = text;
  return span;
}

/** The items of the navigation, the same markup Pagination.astro renders on page 1. */
export function drawListingNav(list: HTMLUListElement, section: string, current: number, total: number): void {
  const href = (readerPage: number) => listingFilePath(section, fileOfReaderPage(readerPage, total));
  const items: HTMLElement[] = [];
  items.push(current > 1 ? link(href(current - 1), '← Previous', { rel: 'prev' }) : disabled('← Previous'));
  for (const item of listPaginationItems(current, total)) {
    if (item.kind === 'ellipsis') {
      const span = document.createElement('span');
      span.className = 'ellipsis';
      span.setAttribute('aria-hidden', 'true');
      span.textContent = '…';
      items.push(span);
    } else {
      const attributes: Record<string, string> = { 'aria-label': `Page ${item.page}` };
      if (item.page === current) attributes['aria-current'] = 'page';
      items.push(link(href(item.page), String(item.page), attributes));
    }
  }
  items.push(current < total ? link(href(current + 1), 'Next →', { rel: 'next' }) : disabled('Next →'));
  list.replaceChildren(
    ...items.map((element) => {
      const li = document.createElement('li');
      li.append(element);
      return li;
    }),
  );
}

/** Finds the archive navigation of this page (if any) and upgrades it: numbers, "Page X of Y", title. */
export async function enhanceListingNav(): Promise<void> {
  const nav = document.querySelector<HTMLElement>('nav[data-listing-section]');
  const list = nav?.querySelector<HTMLUListElement>('ul.pagination');
  if (!nav || !list) return;
  const section = nav.dataset.listingSection!;
  const file = Number(nav.dataset.listingFile);
  let total: number;
  try {
    const response = await fetch(listingManifestPath(section), { headers: { Accept: 'application/json' } });
    if (!response.ok) return;
    total = Number(((await response.json()) as { pages?: unknown }).pages);
  } catch {
    return; // Offline or blocked: the static Previous/Next links still work.
  }
  if (!Number.isInteger(total) || file < 2 || file > total) return;
  const current = readerPageOfFile(file, total);
  drawListingNav(list, section, current, total);
  const eyebrow = document.querySelector<HTMLElement>('[data-listing-eyebrow]');
  if (eyebrow) eyebrow.textContent = `Page ${current} of ${total}`;
  const template = nav.dataset.listingTitle;
  if (template) document.title = template.replace('{page}', String(current));
}
