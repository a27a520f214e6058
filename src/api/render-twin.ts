/** The HTTP side of the on-demand render twins: they draw only what the render thread hands them, and answer anyone else with a 404. */
import type { MachineFile, TwinPage } from '../schemas/pages.ts';
import { respondWithFile } from './machine-files.ts';

/** Each twin route's data, by route. */
type TwinProps = { [P in TwinPage as P['route']]: P['props'] };

/**
 * The data the render thread handed a twin, when it is for `route`. Only the render thread sets it
 * (in the request's locals, never from anything a client sends: our HTTP server hands the bundle
 * locals of its own), so any other caller gets none and is answered with the site's 404.
 */
export function twinProps<R extends keyof TwinProps>(locals: App.Locals, route: R): TwinProps[R] | undefined {
  const twin = locals.twin;
  return twin?.route === route ? (twin.props as TwinProps[R]) : undefined;
}

/** The twin's answer to outside callers: the site's ordinary 404 (Astro renders the 404 page for an empty 404). */
export function refuseOutsideCaller(): Response {
  return new Response(null, { status: 404 });
}

/**
 * Makes an on-demand page emit its Content-Security-Policy as a <meta> element, as Astro does for
 * prerendered pages (it sends a header for on-demand ones). Takes the page's render state; a no-op
 * when the state has no such field (CSP off, or a future Astro that renders it differently).
 */
export function renderCspAsMeta(result: unknown): void {
  if (result && typeof result === 'object' && 'cspDestination' in result) (result as { cspDestination: string }).cspDestination = 'meta';
}

/** A machine file's twin: draws the file the render thread handed it, when it is of one of `kinds`; a 404 otherwise. */
export function respondToFileTwin(locals: App.Locals, kinds: ReadonlyArray<MachineFile['kind']>): Response {
  const file = twinProps(locals, 'file');
  return file && kinds.includes(file.kind) ? respondWithFile(file) : refuseOutsideCaller();
}
