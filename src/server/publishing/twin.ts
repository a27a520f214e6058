/** How an on-demand render twin answers: the page for the worker, a "missing" marker, or 404 for anyone else. */
import { answerMissing, isInternalRender, refuseOutsideCaller } from './render-secret.ts';

export { answerMissing, isInternalRender, refuseOutsideCaller };

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
