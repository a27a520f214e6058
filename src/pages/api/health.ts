/** GET /api/health: liveness and queue depth, for load balancers and tests. */
import { allowMethods, endpoint, json } from '../../api/http.ts';

export const GET = endpoint(async (_context, runtime) => json({ ok: true, jobs: await runtime.store.jobs.size() }));

export const ALL = allowMethods({ GET });
