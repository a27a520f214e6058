/** GET /api/ready: whether this server should get traffic (store, migrations, served folder, not draining); 503 and why when not. */
import { allowMethods, endpoint, json } from '../../api/http.ts';
import { checkReadiness } from '../../server/readiness.ts';

/** How soon a load balancer or a waiting script should ask again. */
const RETRY_AFTER_S = '5';

export const GET = endpoint(async (_context, runtime) => {
  const readiness = await checkReadiness(runtime);
  return readiness.ready ? json(readiness) : json(readiness, 503, { 'Retry-After': RETRY_AFTER_S });
});

export const ALL = allowMethods({ GET });
