/** Counting one page view from a beacon: who is not counted (bots, staff), what the view is about, and where it goes. */
import type { PageviewInput } from '../../schemas/misc.ts';
import { FRONT_PAGE_KEY } from '../../schemas/analytics.ts';
import type { Runtime } from '../runtime.ts';
import { classifyPath, classifyReferrer, deviceOf, isBotAgent } from './classify.ts';
import { viewRecorderOf } from './recorder.ts';

/** What the edge knows of a beacon besides its body. */
export type BeaconContext = { userAgent: string | null; refererHeader: string | null; signedIn: boolean };

/**
 * Counts a view of the front page, a section page or a published article; answers whether it counted.
 * Staff (a valid session) and bots are not counted, and the reader's client sends nothing before consent.
 */
export async function recordPageView(runtime: Runtime, input: PageviewInput, beacon: BeaconContext): Promise<boolean> {
  if (beacon.signedIn || isBotAgent(beacon.userAgent)) return false;
  const target = classifyPath(input.path);
  if (!target) return false;
  let section: string = FRONT_PAGE_KEY;
  let articleId: string | undefined;
  if (target.kind === 'section') section = target.section;
  else if (target.kind === 'article') {
    const record = await runtime.store.articles.getBySlug(target.slug);
    if (!record || record.status !== 'published') return false;
    section = record.section;
    articleId = record.id;
  }
  const siteHost = new URL(runtime.config.SITE_URL).hostname.toLowerCase();
  const referrer = classifyReferrer(input.ref, input.referrer ?? beacon.refererHeader ?? undefined, siteHost);
  // The article's running `views` total is batched with the buckets: a beacon waits for no disk write.
  viewRecorderOf(runtime).record({ section, articleId, referrer, device: deviceOf(beacon.userAgent) });
  return true;
}
