/** Wires the static cookie banner: shown while no choice is stored, Accept or Decline remembered, the page view sent only after Accept. */
import { readConsent, sendPageView, storeConsent, type ConsentChoice } from './consent.ts';

export function initCookieBanner(): void {
  const stored = readConsent();
  if (stored === 'accepted') sendPageView();
  const banner = document.querySelector<HTMLElement>('[data-cookie-banner]');
  if (!banner) return;
  if (stored) {
    banner.remove();
    return;
  }
  // Also when storage is off and the head script could not tell: the reader is asked on every page then.
  banner.classList.add('is-open');
  for (const button of banner.querySelectorAll<HTMLButtonElement>('[data-consent-choice]')) {
    button.addEventListener('click', () => {
      const choice = button.dataset.consentChoice as ConsentChoice;
      storeConsent(choice);
      banner.remove();
      if (choice === 'accepted') sendPageView();
    });
  }
  // Tests (and anyone curious) can tell the buttons work from here on.
  banner.dataset.ready = 'true';
}
