/** The HTTP side of the on-demand render twins: who may call them, and how they answer the worker or anyone else. */
import type { TwinPage } from '../schemas/pages.ts';
import { RENDER_RESULT_HEADER, RENDER_SECRET_HEADER, isRenderSecret } from '../server/publishing/render-secret.ts';

/** Each twin route's data, by route. */
type TwinProps = { [P in TwinPage as P['route']]: P['props'] };

/**
 * The data the render thread handed a page twin, when it is for `route`. Only the render thread sets
 * it (in the request's locals, never from anything a client sends), so any other caller gets none
 * and is answered with the site's 404.
 */
export function twinProps<R extends keyof TwinProps>(locals: App.Locals, route: R): TwinProps[R] | undefined {
  const twin = locals.twin;
  return twin?.route === route ? (twin.props as TwinProps[R]) : undefined;
}

/** Whether a request comes from this process's regeneration worker. */
function isInternalRender(request: Request): boolean {
  return isRenderSecret(request.headers.get(RENDER_SECRET_HEADER));
}

/** The twin's answer to outside callers: the site's ordinary 404 (Astro renders the 404 page for an empty 404). */
export function refuseOutsideCaller(): Response {
  return new Response(null, { status: 404 });
}

/** The twin's answer when the page does not exist for the current data (the worker deletes the file). */
function answerMissing(): Response {
  return new Response('missing', { status: 404, headers: { [RENDER_RESULT_HEADER]: 'missing', 'Content-Type': 'text/plain' } });
}

/**
 * Makes an on-demand page emit its Content-Security-Policy as a <meta> element, as Astro does for
 * prerendered pages (it sends a header for on-demand ones). Takes the page's render state; a no-op
 * when the state has no such field (CSP off, or a future Astro that renders it differently).
 */
export function renderCspAsMeta(result: unknown): void {
  if (result && typeof result === 'object' && 'cspDestination' in result) (result as { cspDestination: string }).cspDestination = 'meta';
}

/** Runs a twin endpoint for the worker only; a 404 from the real route becomes the "missing" marker. */
export async function respondToTwin(request: Request, render: () => Promise<Response>): Promise<Response> {
  if (!isInternalRender(request)) return refuseOutsideCaller();
  const response = await render();
  if (response.status === 404) {
    await response.body?.cancel();
    return answerMissing();
  }
  return response;
}
