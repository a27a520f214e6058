/// <reference types="astro/client" />
import type { Session, User } from './schemas/auth.ts';
import type { Member } from './schemas/member.ts';
import type { TwinPage } from './schemas/pages.ts';
import type { RequestContext } from './server/log.ts';
import type { Runtime } from './server/runtime.ts';

declare global {
  namespace App {
    interface Locals {
      /** The signed-in user, when the request carries a valid session cookie. */
      user?: User;
      session?: Session;
      /** The signed-in reader (issue 48), from the member session cookie; never set together with staff rights. */
      member?: Member;
      memberSession?: Session;
      /** A render twin's page or file and its data, set only by the render thread (src/server/publishing/render-thread-worker.ts). */
      twin?: TwinPage;
      /** The request's id and the route it matched, set by our HTTP server (src/api/node-server.ts); the middleware fills in the route. */
      request?: RequestContext;
      /** The process's runtime (src/server/app.ts), set by our HTTP server for every request, by the middleware under `astro dev`. */
      runtime?: Runtime;
    }
  }
  /** The render state Astro's compiler hands every component's frontmatter; the render twins pass it to renderCspAsMeta. */
  const $$result: unknown;
}
