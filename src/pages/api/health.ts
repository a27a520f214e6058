/** GET /api/health: liveness (answers while the database is down), the version, queue depth and pages queued per publish. */
import { allowMethods, endpoint, json } from '../../api/http.ts';
import { describePublishing } from '../../server/publishing/service.ts';
import { APP_VERSION } from '../../server/version.ts';

export const GET = endpoint(async (_context, runtime) => json({ ok: true, version: APP_VERSION, ...(await describePublishing(runtime)) }));

export const ALL = allowMethods({ GET });
