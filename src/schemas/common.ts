/** Shared primitives of the API contract: sections, paging, ids, the error shape. */
import { z } from './zod.ts';
import { SECTIONS } from './sections.ts';

// Zod probes `new Function` before its first parse to pick a faster parser; in the browser the site's CSP
// (no 'unsafe-eval') reports that probe as a violation. Islands parse little, so they skip it.
if (typeof document !== 'undefined') z.config({ jitless: true });

export { NAV_SECTIONS, SECTIONS } from './sections.ts';

export const sectionSchema = z.enum(SECTIONS, {
  error: (issue) =>
    `Unknown section${issue.input === undefined ? '' : ` "${String(issue.input)}"`}; expected one of ${SECTIONS.join(', ')}`,
});
export type Section = z.infer<typeof sectionSchema>;

export const idSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'Invalid id');

export const DEFAULT_PAGE_SIZE = 12;
export const MAX_PAGE_SIZE = 100;

/** `page`, `pageSize` and `limit` from a query string. */
export const pagingQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
});

/** "true"/"false" in a query string. */
export const queryBoolean = z.enum(['true', 'false']).transform((v) => v === 'true');

/** An ISO date (2025-10-01) or date-time with offset. */
export const isoDateOrDateTime = z.union([z.iso.date(), z.iso.datetime({ offset: true })], {
  error: 'Expected an ISO date or date-time',
});

export const countSchema = z.object({ count: z.number().int().min(0) });
export type CountResponse = z.infer<typeof countSchema>;

/** Every error answer of the API. */
export const apiErrorSchema = z.object({
  error: z.string(),
  issues: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })).optional(),
});
export type ApiError = z.infer<typeof apiErrorSchema>;

/** Turns an empty string (e.g. from a form or query) into undefined. */
export function emptyToUndefined(value: unknown): unknown {
  return typeof value === 'string' && value.trim() === '' ? undefined : value;
}
