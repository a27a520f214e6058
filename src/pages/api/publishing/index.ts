/** GET /api/publishing (admins and editors): the Publishing panel's figures: waiting, rendering now, recent, failed, the search index. */
import { allowMethods, authorizedEndpoint, json } from '../../../api/http.ts';
import { readPublishingStatus } from '../../../server/publishing/publishing-status.ts';

export const GET = authorizedEndpoint('publishing.manage', async (_context, runtime) => json(await readPublishingStatus(runtime)));

export const ALL = allowMethods({ GET });
