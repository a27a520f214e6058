/** The gated body of an article (issue 48): the one way the rest of a members-only or paid story leaves the server. */
import type { Member } from '../../schemas/member.ts';
import { canReadAccess, readerLevelOf } from '../../schemas/member.ts';
import { addInlineImageSrcset } from '../../lib/inline-images.ts';
import { AppError, notFound } from '../errors.ts';
import type { Runtime } from '../runtime.ts';

/** Who asks: the signed-in member, if any, and whether a staff session that may read articles came with the request. */
export type GatedReader = { member?: Member | undefined; staff: boolean };

/**
 * The whole body of a published article, as its page would show it, for a reader whose level allows it
 * (staff read every story, as in the editor): 404 for an article that is not published, 401 for
 * nobody signed in, 403 for a level too low.
 */
export async function readGatedBody(
  runtime: Runtime,
  articleId: string,
  reader: GatedReader,
  nowMs: number,
): Promise<{ bodyHtml: string }> {
  const article = await runtime.store.articles.get(articleId, { body: true });
  if (!article || article.status !== 'published') throw notFound('Article');
  const level = readerLevelOf(reader.member, nowMs);
  if (!reader.staff && !canReadAccess(article.access, level)) {
    if (level === 'anonymous') throw new AppError(401, 'Sign in to read this story');
    throw new AppError(403, 'This story is for paying subscribers');
  }
  return { bodyHtml: addInlineImageSrcset(article.bodyHtml) };
}
