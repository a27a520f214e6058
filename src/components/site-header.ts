/** The header's two small behaviours without a framework: the theme toggle (remembered) and the mobile menu. */

export const THEME_KEY = 'meridian-theme';

function applyTheme(theme: 'light' | 'dark', toggle: HTMLElement | null): void {
  if (theme === 'dark') document.documentElement.dataset.theme = 'dark';
  else delete document.documentElement.dataset.theme;
  toggle?.setAttribute('aria-pressed', String(theme === 'dark'));
}

export function initHeader(): void {
  const themeToggle = document.getElementById('theme-toggle');
  applyTheme(document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light', themeToggle);
  themeToggle?.addEventListener('click', () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    applyTheme(next, themeToggle);
    try {
      localStorage.setItem(THEME_KEY, next);
    } catch {
      // Storage disabled: the theme lasts for this page.
    }
  });

  const menuToggle = document.getElementById('menu-toggle');
  const nav = document.getElementById('site-nav');
  if (!menuToggle || !nav) return;
  const setOpen = (open: boolean) => {
    nav.dataset.open = String(open);
    menuToggle.setAttribute('aria-expanded', String(open));
  };
  menuToggle.addEventListener('click', () => setOpen(nav.dataset.open !== 'true'));
  nav.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('a')) setOpen(false);
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && nav.dataset.open === 'true') {
      setOpen(false);
      menuToggle.focus();
    }
  });
}
