/** GET /api/health: liveness (answers while the database is down), the version, queue depth and pages queued per publish. */
import { allowMethods, endpoint, json } from '../../api/http.ts';
import { describePublishing } from '../../server/publishing/service.ts';
import { VERSION } from '../../server/version.ts';

export const GET = endpoint(async (_context, runtime) => json({ ok: true, version: VERSION, ...(await describePublishing(runtime)) }));

export const ALL = allowMethods({ GET });
