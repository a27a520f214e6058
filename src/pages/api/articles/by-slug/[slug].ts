/** GET /api/articles/by-slug/{slug}: one article with its counters; drafts only to admins (preview). */
import { allowMethods, endpoint, json, param, viewerOf } from '../../../../api/http.ts';
import { getArticleBySlug } from '../../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => json(await getArticleBySlug(runtime, param(context, 'slug'), viewerOf(context))));

export const ALL = allowMethods({ GET });
