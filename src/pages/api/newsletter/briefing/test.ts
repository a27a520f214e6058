/** POST /api/newsletter/briefing/test {email}: sends the current briefing, marked [Test], to one address (signed-in staff only). */
import { authorizedEndpoint, allowMethods, json, parseJsonBody } from '../../../../api/http.ts';
import { testCopyInputSchema } from '../../../../schemas/newsletter.ts';
import { sendTestCopy } from '../../../../server/briefing/briefing.ts';
import { consumeRateLimit } from '../../../../server/rate-limit.ts';

/** Test copies per user: enough to iterate on a briefing, too few to mail-bomb with it. */
const TEST_COPY_LIMIT = { name: 'briefing-test', limit: 10, windowMs: 60 * 60_000 };

export const POST = authorizedEndpoint('subscriber.manage', async (context, runtime, user) => {
  const { email } = await parseJsonBody(context.request, testCopyInputSchema);
  await consumeRateLimit(runtime, TEST_COPY_LIMIT, user.id);
  await sendTestCopy(runtime, email);
  return json({ message: `Test copy sent to ${email}` });
});

export const ALL = allowMethods({ POST });
