/**
 * POST /api/newsletter/briefing/run {force}: the internal call of `npm run briefing` while this server
 * holds DATA_DIR. Authorised by X-Briefing-Key (an HMAC of the app secret in DATA_DIR), not a session.
 */
import { allowMethods, endpoint, json, parseJsonBody } from '../../../../api/http.ts';
import { briefingRunInputSchema } from '../../../../schemas/newsletter.ts';
import { runBriefing } from '../../../../server/briefing/briefing.ts';
import { isBriefingKeyValid } from '../../../../server/briefing/service.ts';
import { AppError } from '../../../../server/errors.ts';

export const POST = endpoint(async (context, runtime) => {
  if (!(await isBriefingKeyValid(runtime, context.request.headers.get('x-briefing-key')))) throw new AppError(403, 'Invalid briefing key');
  const { force } = await parseJsonBody(context.request, briefingRunInputSchema);
  return json(await runBriefing(runtime, { force, trigger: 'script' }));
});

export const ALL = allowMethods({ POST });
