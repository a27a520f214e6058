/** DELETE /api/newsletter/subscribers/{id}: removes a subscriber for good (204; signed-in staff only). */
import { authorizedEndpoint, allowMethods, noContent, param } from '../../../../api/http.ts';
import { removeSubscriber } from '../../../../server/newsletter.ts';

export const DELETE = authorizedEndpoint('subscriber.manage', async (context, runtime) => {
  await removeSubscriber(runtime, param(context, 'id'));
  return noContent();
});

export const ALL = allowMethods({ DELETE });
