/**
 * GET /api/news-sources/progress: each source's fetch running now, else its last (admin only; polled):
 * this server's, and on a shared store every server's.
 */
import { authorizedEndpoint, allowMethods, json } from '../../../api/http.ts';
import { listProgress } from '../../../server/ingest/fetch-progress.ts';

export const GET = authorizedEndpoint('source.manage', async (_context, runtime) => json({ runs: await listProgress(runtime) }));

export const ALL = allowMethods({ GET });
