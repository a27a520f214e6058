/**
 * What the regeneration worker renders a public path from, loaded on the thread that holds the
 * store: the twin of an HTML page or a machine file and the data it shows (the render thread draws
 * it), or word that the file does not exist for the current data.
 */
import type { TwinPage } from '../../schemas/pages.ts';
import { loadCorrectionsPage } from '../corrections.ts';
import { readArticlePage, readSectionPage } from '../page-data.ts';
import { readTermPage } from '../archive-pages.ts';
import { loadMachineFile, parseTermPath } from './feeds.ts';
import { CORRECTIONS_PATH } from './paths.ts';
import { articlePageInput, listingPageInput, machineFileInput, termPageInput } from './render-inputs.ts';

export type PageLoad =
  /** `input`: the fingerprint of what the page shows, for the render journal (none for files drawn on every rebuild). */
  { kind: 'page'; twin: TwinPage; input?: string } | { kind: 'missing' };

const ARTICLE = /^\/article\/([^/]+)$/;
const LISTING = /^\/section\/([^/]+)(?:\/page\/([0-9]+))?$/;

/** What `publicPath` is drawn from; throws for a path no twin draws. */
export async function loadPage(publicPath: string): Promise<PageLoad> {
  const article = ARTICLE.exec(publicPath);
  if (article) {
    const read = await readArticlePage(decodeURIComponent(article[1]!));
    if (!read) return { kind: 'missing' };
    const input = articlePageInput(read.record, { related: read.related, rules: read.rules, live: read.data.live });
    return { kind: 'page', twin: { route: 'article', props: read.data }, input };
  }
  const listing = LISTING.exec(publicPath);
  if (listing) {
    const page = listing[2] === undefined ? 1 : Number(listing[2]);
    // Page 1 lives at /section/{section}: a /page/1 file is never written.
    const read = listing[2] === undefined || page >= 2 ? await readSectionPage(listing[1]!, page) : undefined;
    if (!read) return { kind: 'missing' };
    return { kind: 'page', twin: { route: 'section', props: read.data }, input: listingPageInput(read.records, read.totalPages, page) };
  }
  const term = parseTermPath(publicPath);
  if (term && typeof term.file === 'number') {
    // Page 1 lives at /tag/{slug}: a /page/1 file is never written.
    const read = publicPath.includes('/page/') && term.file < 2 ? undefined : await readTermPage(term.kind, term.slug, term.file);
    if (!read) return { kind: 'missing' };
    return {
      kind: 'page',
      twin: { route: 'term', props: read.data },
      input: termPageInput(read.records, read.totalPages, term.file, read.count),
    };
  }
  if (publicPath === CORRECTIONS_PATH) return { kind: 'page', twin: { route: 'corrections', props: await loadCorrectionsPage() } };
  const machine = await loadMachineFile(publicPath);
  if (machine.kind === 'file') {
    const input = machineFileInput(machine.file);
    return { kind: 'page', twin: { route: 'file', props: machine.file }, ...(input === undefined ? {} : { input }) };
  }
  if (machine.kind === 'missing') return { kind: 'missing' };
  // Never "missing": a path no twin draws must not delete a served file.
  throw new Error(`no render twin draws ${publicPath}`);
}
