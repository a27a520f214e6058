/** GET /api/health: liveness, queue depth and pages queued per publish, for load balancers, tests and the bench. */
import { allowMethods, endpoint, json } from '../../api/http.ts';
import { publishCounters } from '../../server/publishing/service.ts';

export const GET = endpoint(async (_context, runtime) => json({ ok: true, jobs: await runtime.store.jobs.size(), publishing: publishCounters(runtime) }));

export const ALL = allowMethods({ GET });
