/** GET /api/health: liveness, queue depth and pages queued per publish, for load balancers, tests and the bench. */
import { allowMethods, endpoint, json } from '../../api/http.ts';
import { describePublishing } from '../../server/publishing/service.ts';

export const GET = endpoint(async (_context, runtime) => json({ ok: true, ...(await describePublishing(runtime)) }));

export const ALL = allowMethods({ GET });
