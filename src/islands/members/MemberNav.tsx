/** The header's reader link: "Sign in" in the static HTML, "Account" once the member hint cookie says a member is signed in. */
import { useSyncExternalStore } from 'react';
import { hasMemberHint } from '../../lib/signed-in-hint.ts';

// The cookie changes only with a page load (sign-in and sign-out navigate): nothing to subscribe to.
const subscribe = () => () => {};

export default function MemberNav() {
  // Hydration renders the server's answer (signed out, as the static HTML), then the cookie's; the link keeps one width.
  const signedIn = useSyncExternalStore(subscribe, hasMemberHint, () => false);
  return signedIn ? (
    <a className="btn btn-sm member-nav" href="/account" data-testid="member-nav">
      Account
    </a>
  ) : (
    <a className="btn btn-sm member-nav" href="/account/sign-in" data-testid="member-nav">
      Sign in
    </a>
  );
}
