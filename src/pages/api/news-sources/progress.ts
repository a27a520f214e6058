/** GET /api/news-sources/progress: each source's fetch running now, else its last since this server started (admin only; polled). */
import { authorizedEndpoint, allowMethods, json } from '../../../api/http.ts';
import { listProgress } from '../../../server/ingest/fetch-progress.ts';

export const GET = authorizedEndpoint('source.manage', async (_context, runtime) => json({ runs: listProgress(runtime) }));

export const ALL = allowMethods({ GET });
