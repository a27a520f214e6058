/** GET /api/newsletter/subscribers/export: every subscriber as a CSV download (signed-in staff only). */
import { authorizedEndpoint, allowMethods } from '../../../../api/http.ts';
import { exportSubscribersCsv } from '../../../../server/newsletter.ts';

export const GET = authorizedEndpoint('subscriber.manage', async (_context, runtime) => {
  const csv = await exportSubscribersCsv(runtime);
  const day = new Date().toISOString().slice(0, 10);
  return new Response(csv, {
    headers: {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="subscribers-${day}.csv"`,
      'Cache-Control': 'no-store',
    },
  });
});

export const ALL = allowMethods({ GET });
