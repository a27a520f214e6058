/**
 * POST /api/newsletter/unsubscribe?token=...: the RFC 8058 one-click unsubscribe a mailbox provider
 * sends (body `List-Unsubscribe=One-Click`, no cookies, no Origin); GET sends a person to the page.
 */
import { readBodyBytes } from '../../../api/body-limit.ts';
import { allowMethods, endpoint, json, parseQuery } from '../../../api/http.ts';
import { unsubscribeQuerySchema } from '../../../schemas/newsletter.ts';
import { unsubscribe } from '../../../server/newsletter.ts';

export const POST = endpoint(async (context, runtime) => {
  const { token } = parseQuery(context.url, unsubscribeQuerySchema);
  // The body is read (and capped) but not required to match: the token alone is the authority.
  await readBodyBytes(context.request, 4096);
  await unsubscribe(runtime, token);
  return json({ message: 'Unsubscribed' });
});

/** Some mail clients open the List-Unsubscribe URL in a browser: show the page, which unsubscribes too. */
export const GET = endpoint(async (context) => {
  const { token } = parseQuery(context.url, unsubscribeQuerySchema);
  return new Response(null, { status: 303, headers: { Location: `/newsletter/unsubscribe?token=${token}`, 'Cache-Control': 'no-store' } });
});

export const ALL = allowMethods({ GET, POST });
