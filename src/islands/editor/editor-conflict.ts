/** What the editor knows about a 409 (issue 14): the article as it is now, who changed it and when. */
import { ApiRequestError } from '../../lib/api-client.ts';
import type { Article } from '../../schemas/article.ts';

export type EditConflict = { current: Article; changedBy: string | null; changedAt: string };

/** The conflict carried by a 409 answer, or undefined for any other failure. */
export function conflictOf(error: unknown): EditConflict | undefined {
  if (!(error instanceof ApiRequestError) || error.status !== 409) return undefined;
  const body = error.body as Partial<EditConflict> | undefined;
  if (!body?.current || typeof body.current.version !== 'number') return undefined;
  return { current: body.current, changedBy: body.changedBy ?? null, changedAt: body.changedAt ?? body.current.updatedAt };
}

/** The If-Match header for a version. */
export function ifMatch(version: number | undefined): Record<string, string> {
  return version === undefined ? {} : { 'If-Match': `"${version}"` };
}
