/**
 * POST /api/backup/snapshot {pid}: the internal call of `npm run backup` while this server holds a lowdb
 * DATA_DIR. Authorised by X-Backup-Key (an HMAC of the app secret in DATA_DIR), not a session.
 */
import { allowMethods, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { backupSnapshotInputSchema } from '../../../schemas/backup.ts';
import { assertBackupKey, snapshotForScript } from '../../../server/backup/backup.ts';

export const POST = endpoint(async (context, runtime) => {
  await assertBackupKey(runtime, context.request.headers.get('x-backup-key'));
  const { pid } = await parseJsonBody(context.request, backupSnapshotInputSchema);
  return json(await snapshotForScript(runtime, pid));
});

export const ALL = allowMethods({ POST });
