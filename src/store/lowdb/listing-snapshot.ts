/**
 * The articles' listing fields in one file, written when the store closes cleanly, so the next open
 * reads one file instead of every article file (100,000 of them at archive size).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ArticleRecord } from '../../schemas/article.ts';
import { writeFileAtomic } from './file.ts';

export const LISTING_SNAPSHOT_FILE = 'articles-listing.json';
const FORMAT = 1;

/**
 * `version` is the articles' version when it was written. Every article write bumps the version on
 * disk before it touches the article's file, so a snapshot whose version is still the current one
 * describes exactly the files on disk; after any write since (or a crash in the middle of one) the
 * versions differ and the open reads the files instead.
 */
type ListingSnapshot = { format: number; version: number; articles: ArticleRecord[] };

function snapshotFile(dir: string): string {
  return path.join(dir, LISTING_SNAPSHOT_FILE);
}

/** The records (with `bodyHtml: ''`) when a snapshot exists for exactly `version`; undefined otherwise. */
export function readListingSnapshot(dir: string, version: number): ArticleRecord[] | undefined {
  let text: string;
  try {
    text = fs.readFileSync(snapshotFile(dir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const snapshot = JSON.parse(text) as Partial<ListingSnapshot>;
    if (snapshot.format !== FORMAT || snapshot.version !== version || !Array.isArray(snapshot.articles)) return undefined;
    return snapshot.articles;
  } catch {
    // A snapshot is only a shortcut: an unreadable one means reading the article files.
    return undefined;
  }
}

/** Writes the snapshot of `records` at `version`. Bodies are left out without being read (their getters stay untouched). */
export async function writeListingSnapshot(dir: string, version: number, records: Iterable<ArticleRecord>): Promise<void> {
  const articles: Record<string, unknown>[] = [];
  for (const record of records) {
    const entry: Record<string, unknown> = {};
    // Same keys in the same order as the file, `bodyHtml` as the empty string the body-less parse gives.
    for (const key of Object.keys(record)) entry[key] = key === 'bodyHtml' ? '' : record[key as keyof ArticleRecord];
    articles.push(entry);
  }
  await writeFileAtomic(snapshotFile(dir), JSON.stringify({ format: FORMAT, version, articles }));
}

/** Drops the snapshot (before a migration rewrites the article files underneath it). */
export function removeListingSnapshot(dir: string): void {
  fs.rmSync(snapshotFile(dir), { force: true });
}
