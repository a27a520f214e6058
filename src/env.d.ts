/// <reference types="astro/client" />
import type { Session, User } from './schemas/auth.ts';

declare global {
  namespace App {
    interface Locals {
      /** The signed-in user, when the request carries a valid session cookie. */
      user?: User;
      session?: Session;
    }
  }
  /** The render state Astro's compiler hands every component's frontmatter; the render twins pass it to renderCspAsMeta. */
  const $$result: unknown;
}
