/**
 * The render manifest: which store, at which article version, the served pages were rendered from.
 * It sits beside the client folder (OUT_DIR/render-manifest.json), where the static server never looks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const renderManifestSchema = z.object({
  storeId: z.string(),
  version: z.number().int(),
  renderedAt: z.string(),
  /** SITE_URL the pages were rendered with (canonical links, feeds): another one makes them stale too. */
  siteUrl: z.string().optional(),
  /** What wrote it: the build or the server's regeneration worker. */
  by: z.enum(['build', 'server']),
  /**
   * Search jobs of this folder still to run (job paths such as `/pagefind/2026-10`): a server on
   * PostgreSQL holds its own in memory, and a stop with some left names them here so the next start
   * runs them instead of re-checking every page.
   */
  searchJobs: z.array(z.string()).optional(),
});
export type RenderManifest = z.infer<typeof renderManifestSchema>;

export function manifestFileFor(clientDir: string): string {
  return path.join(path.dirname(path.resolve(clientDir)), 'render-manifest.json');
}

export function readRenderManifest(file: string): RenderManifest | undefined {
  try {
    const parsed = renderManifestSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the manifest atomically (temp + rename) so a crash never leaves half of it. */
export function writeRenderManifest(file: string, manifest: RenderManifest): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, JSON.stringify(manifest, null, 2) + '\n');
    fs.renameSync(temp, file);
  } catch (error) {
    // A full disk: the previous manifest stays, the partial temp file goes.
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/** Whether the served pages were rendered from this store at this version (and, when known, for this SITE_URL). */
export function manifestMatches(manifest: RenderManifest | undefined, store: { id: string; version: number }, siteUrl?: string): boolean {
  if (manifest === undefined || manifest.storeId !== store.id || manifest.version !== store.version) return false;
  return siteUrl === undefined || manifest.siteUrl === undefined || manifest.siteUrl === siteUrl;
}
