/** Corrections (issue 14): editors append them to published articles; the article page and /corrections show them. */
import { randomUUID } from 'node:crypto';
import type { Correction, CorrectionInput } from '../schemas/article.ts';
import type { Store } from '../store/types.ts';
import type { Runtime } from './runtime.ts';
import { useReadStore } from './runtime.ts';
import { AppError } from './errors.ts';
import { commitArticle } from './articles.ts';
import { getConfig } from '../config.ts';
import { lastModifiedOf } from '../lib/corrections.ts';
import type { CorrectionListing, CorrectionsPageData } from '../schemas/pages.ts';

export type { CorrectionListing };
export { lastModifiedOf };

/** Appends a correction to a published article: a save (new version, revision) that regenerates its page and /corrections. */
export async function addCorrection(
  runtime: Runtime,
  articleId: string,
  input: CorrectionInput,
  options: { actor?: string; expectedVersion?: number | undefined } = {},
): Promise<Correction> {
  let added: Correction | undefined;
  await commitArticle(
    runtime,
    articleId,
    (before, now) => {
      if (before.status !== 'published') throw new AppError(409, 'Corrections are appended to published articles only');
      added = { id: randomUUID(), text: input.text, at: now, ...(options.actor ? { by: options.actor } : {}) };
      return { ...before, updatedAt: now, corrections: [...(before.corrections ?? []), added] };
    },
    { actor: options.actor, expectedVersion: options.expectedVersion },
  );
  return added!;
}

/** Every correction of a published article, newest first. */
export async function listCorrections(store: Store): Promise<CorrectionListing[]> {
  const filter = { statuses: ['published'] as const };
  const total = await store.articles.count(filter);
  const records = await store.articles.list(filter, { offset: 0, limit: total }, 'recent');
  const site = getConfig().SITE_URL;
  const out: CorrectionListing[] = [];
  for (const record of records) {
    for (const correction of record.corrections ?? []) {
      out.push({
        ...correction,
        articleTitle: record.title,
        articleSlug: record.slug,
        articleUrl: new URL(`/article/${encodeURIComponent(record.slug)}`, site).pathname,
      });
    }
  }
  return out.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}

/** What the /corrections page renders (prerendered and its twin). */
export async function loadCorrectionsPage(): Promise<CorrectionsPageData> {
  return { corrections: await listCorrections(await useReadStore()) };
}
