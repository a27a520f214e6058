/** The cookie banner: Accept or Decline, remembered; page views are reported only after Accept. */
import { useEffect, useState } from 'react';
import { readConsent, sendPageView, storeConsent, type ConsentChoice } from './consent.ts';

export default function CookieBanner() {
  // Undefined until mounted: the static HTML never shows the banner, so returning readers see no flash.
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

  if (choice !== 'unset') return null;
  return (
    <section className="cookie-banner" aria-labelledby="cookie-banner-title" data-pagefind-ignore>
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
