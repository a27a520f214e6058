/**
 * The Pagefind search index of the served pages, built through Pagefind's Node API into a fresh
 * folder (with compressed twins of its text files) and renamed into place, so readers never load a half-written index.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import * as pagefind from 'pagefind';
import { compressTree } from './compress.ts';
import { notifyServedFileChange } from './files.ts';

export type SearchIndexResult = { pages: number; ms: number };

/** Indexes every HTML page under `clientDir` and swaps the result in as `clientDir/pagefind`. */
export async function buildSearchIndex(clientDir: string): Promise<SearchIndexResult> {
  const started = performance.now();
  const root = path.resolve(clientDir);
  const stamp = `${process.pid}-${Date.now()}`;
  // Dot folders are never served, so the new index is invisible until the rename.
  const next = path.join(root, `.pagefind-next-${stamp}`);
  const old = path.join(root, `.pagefind-old-${stamp}`);
  const target = path.join(root, 'pagefind');
  try {
    const { index, errors } = await pagefind.createIndex({});
    if (!index) throw new Error(errors.join('; ') || 'no index');
    const added = await index.addDirectory({ path: root, glob: '**/*.html' });
    if (added.errors.length) throw new Error(added.errors.join('; '));
    const written = await index.writeFiles({ outputPath: next });
    if (written.errors.length) throw new Error(written.errors.join('; '));
    // Pagefind's script, styles and entry file get brotli and gzip twins (its index fragments are gzip already).
    await compressTree(next);
    let hadOld = true;
    try {
      await fs.rename(target, old);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      hadOld = false;
    }
    await fs.rename(next, target);
    notifyServedFileChange(target);
    if (hadOld) await fs.rm(old, { recursive: true, force: true });
    return { pages: added.page_count, ms: performance.now() - started };
  } catch (error) {
    await fs.rm(next, { recursive: true, force: true });
    throw new Error(`Building the search index of ${root} failed`, { cause: error });
  } finally {
    await pagefind.close();
  }
}
