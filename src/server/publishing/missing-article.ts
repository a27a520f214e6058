/** The prerendered 'Article Not Found' screen, read from the served folder for /article/{slug} paths that have no page. */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Runtime } from '../runtime.ts';

/** Where the build writes src/pages/article-404.astro: outside /article/, so the worker never takes it for an orphaned article. */
export const MISSING_ARTICLE_FILE = path.join('article-404', 'index.html');

/** The screen's HTML from the served folder, or undefined when no server folder is attached or the build has no such file. */
export async function readMissingArticlePage(runtime: Runtime): Promise<Buffer | undefined> {
  if (!runtime.servedDir) return undefined;
  try {
    return await fs.readFile(path.join(runtime.servedDir, MISSING_ARTICLE_FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
