/** Every migration, in order: a new schema change is a new numbered module here, never an edit of an applied one. */
import initial from './001-initial.ts';
import servers from './002-servers.ts';
import pageTombstones from './003-page-tombstones.ts';
import viewBuckets from './004-view-buckets.ts';
import liveCoverage from './005-live-coverage.ts';

export type Migration = { version: number; name: string; sql: string };

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '001-initial', sql: initial },
  { version: 2, name: '002-servers', sql: servers },
  { version: 3, name: '003-page-tombstones', sql: pageTombstones },
  { version: 4, name: '004-view-buckets', sql: viewBuckets },
  { version: 5, name: '005-live-coverage', sql: liveCoverage },
];
