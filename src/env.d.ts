/// <reference types="astro/client" />

declare namespace App {
  interface Locals {
    /** The signed-in user, when the request carries a valid session cookie. */
    user?: import('./schemas/auth.ts').User;
    session?: import('./schemas/auth.ts').Session;
  }
}
