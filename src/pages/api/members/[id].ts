/** GET /api/members/{id}: one member, their subscription and their history, newest line first (admins and editors). */
import { allowMethods, authorizedEndpoint, json, param } from '../../../api/http.ts';
import { getMember } from '../../../server/members/admin.ts';

export const GET = authorizedEndpoint('member.read', async (context, runtime) => json(await getMember(runtime, param(context, 'id'))));

export const ALL = allowMethods({ GET });
