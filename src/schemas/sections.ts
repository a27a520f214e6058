/**
 * The sections, as plain constants: reader islands import them from here, because schemas/common.ts
 * builds zod schemas when it loads, and importing a constant from it put zod on the reader's page.
 */
export const SECTIONS = ['world', 'business', 'politics', 'tech', 'sports', 'culture', 'opinion', 'home'] as const;
/** Sections in the navigation and search chips (home is the editor's default, not in the nav). */
export const NAV_SECTIONS = ['world', 'business', 'politics', 'tech', 'sports', 'culture', 'opinion'] as const;
