/** Every migration, in order: a new schema change is a new numbered module here, never an edit of an applied one. */
import initial from './001-initial.ts';
import servers from './002-servers.ts';
import pageTombstones from './003-page-tombstones.ts';
import viewBuckets from './004-view-buckets.ts';
import { backfillArticleTerms, default as articleTerms } from './005-article-terms.ts';
import liveCoverage from './006-live-coverage.ts';
import members from './007-members.ts';
import type pg from 'pg';

/** `backfill` runs after `sql` in the same transaction, for values SQL cannot compute (such as a slug made in the application). */
export type Migration = { version: number; name: string; sql: string; backfill?: (client: pg.PoolClient) => Promise<void> };

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '001-initial', sql: initial },
  { version: 2, name: '002-servers', sql: servers },
  { version: 3, name: '003-page-tombstones', sql: pageTombstones },
  { version: 4, name: '004-view-buckets', sql: viewBuckets },
  { version: 5, name: '005-article-terms', sql: articleTerms, backfill: backfillArticleTerms },
  { version: 6, name: '006-live-coverage', sql: liveCoverage },
  { version: 7, name: '007-members', sql: members },
];
