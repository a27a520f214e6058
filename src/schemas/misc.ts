/** Small contracts: page-view beacons, images, regeneration jobs. */
import { z } from './zod.ts';

export const pageviewInputSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(512)
    .regex(/^\/[^\s]*$/, 'Expected a site path'),
  /** The campaign tag of the page's URL (`ref` or `utm_source`, e.g. `newsletter`). */
  ref: z.string().max(100).optional(),
  /** The page's own referrer (document.referrer): a beacon's Referer header names the page itself. */
  referrer: z.string().max(1024).optional(),
});
export type PageviewInput = z.infer<typeof pageviewInputSchema>;

export const normalizeImageInputSchema = z.strictObject({
  imageUrl: z.string().trim().min(1).max(2048),
});

/** POST /api/images/upload-url: a one-time URL on this server to PUT the raw file to. */
export const uploadUrlResultSchema = z.object({ uploadURL: z.string() });
export type UploadUrlResult = z.infer<typeof uploadUrlResultSchema>;

/** POST /api/images/normalize: the public path of the 1200 px WebP, which becomes heroImage. */
export const normalizeImageResultSchema = z.object({ path: z.string().regex(/^\/images\/[a-f0-9]{32}\/1200\.webp$/) });
export type NormalizeImageResult = z.infer<typeof normalizeImageResultSchema>;

/** A regeneration job: one public path to render (or delete) again. */
export const jobSchema = z.object({
  id: z.string(),
  /** The public path, e.g. /article/some-slug or /section/world/page/2 or /sitemap.xml */
  path: z.string(),
  createdAt: z.string(),
  /** Last time the path was (re-)queued; a job re-queued while rendering is rendered again. */
  queuedAt: z.string(),
  attempts: z.number().int().min(0),
  lastError: z.string().optional(),
});
export type Job = z.infer<typeof jobSchema>;
