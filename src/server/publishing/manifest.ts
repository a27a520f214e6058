/**
 * The render manifest: which store, at which article version, the served pages were rendered from.
 * It is the first line of the render state (OUT_DIR/render-state.json, render-state.ts), beside the
 * client folder, where the static server never looks.
 */
import {
  readRenderStateHeader,
  renderStateFileFor,
  updateRenderStateHeader,
  updateRenderStateHeaderAsync,
  type RenderManifest,
} from './render-state.ts';

export type { RenderManifest } from './render-state.ts';

/** The file the manifest of `clientDir` is kept in (the render state). */
export function manifestFileFor(clientDir: string): string {
  return renderStateFileFor(clientDir);
}

export function readRenderManifest(file: string): RenderManifest | undefined {
  return readRenderStateHeader(file).manifest;
}

/** Writes the manifest atomically (temp + rename) so a crash never leaves half of it; the rest of the state stays. */
export function writeRenderManifest(file: string, manifest: RenderManifest): void {
  updateRenderStateHeader(file, (header) => ({ ...header, manifest }));
}

/** As writeRenderManifest, off the event loop (the server's worker: the render state may hold a line per page). */
export function saveRenderManifest(file: string, manifest: RenderManifest): Promise<void> {
  return updateRenderStateHeaderAsync(file, (header) => ({ ...header, manifest }));
}

/** Whether the served pages were rendered from this store at this version (and, when known, for this SITE_URL). */
export function manifestMatches(manifest: RenderManifest | undefined, store: { id: string; version: number }, siteUrl?: string): boolean {
  if (manifest === undefined || manifest.storeId !== store.id || manifest.version !== store.version) return false;
  return siteUrl === undefined || manifest.siteUrl === undefined || manifest.siteUrl === siteUrl;
}
