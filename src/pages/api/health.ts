import { endpoint, json } from '../../api/http.ts';

/** Liveness and queue depth, for load balancers and tests. */
export const GET = endpoint(async (_context, runtime) => json({ ok: true, jobs: await runtime.store.jobs.size() }));
