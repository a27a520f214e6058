/** The cookie banner: Accept or Decline, remembered; page views are reported only after Accept. */
import { useEffect, useState } from 'react';
import { readConsent, sendPageView, storeConsent, type ConsentChoice } from './consent.ts';

export default function CookieBanner() {
  // Undefined until mounted. The static HTML carries the banner, hidden unless the head script found no
  // choice (:root[data-consent='unset']): first-time readers see it at first paint, returning ones never.
  const [choice, setChoice] = useState<ConsentChoice | 'unset' | undefined>(undefined);

  useEffect(() => {
    const stored = readConsent();
    setChoice(stored ?? 'unset');
    if (stored === 'accepted') sendPageView();
  }, []);

  const decide = (next: ConsentChoice) => {
    storeConsent(next);
    setChoice(next);
    if (next === 'accepted') sendPageView();
  };

  if (choice !== 'unset' && choice !== undefined) return null;
  return (
    <section className={choice === 'unset' ? 'cookie-banner is-open' : 'cookie-banner'} aria-labelledby="cookie-banner-title" data-pagefind-ignore>
      <h2 id="cookie-banner-title">We value your privacy</h2>
      <p>
        We use a first-party cookie to count page views and improve our journalism. No advertising or third-party trackers.{' '}
        <a href="/cookies">Cookie Policy</a>
      </p>
      <div className="actions">
        <button type="button" className="btn btn-primary" onClick={() => decide('accepted')}>
          Accept
        </button>
        <button type="button" className="btn" onClick={() => decide('declined')}>
          Decline
        </button>
      </div>
    </section>
  );
}
