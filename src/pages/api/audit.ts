/** GET /api/audit?page=&pageSize=: the audit log, newest first (admins). */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../api/http.ts';
import { auditListQuerySchema } from '../../schemas/audit.ts';
import { listAudit } from '../../server/audit.ts';

export const GET = authorizedEndpoint('audit.read', async (context, runtime) =>
  json(await listAudit(runtime, parseQuery(context.url, auditListQuerySchema))),
);

export const ALL = allowMethods({ GET });
