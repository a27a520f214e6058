/**
 * Which vitest files run on which store (docs/testing.md). A file runs on lowdb and again on PostgreSQL
 * unless it is named here: what is not named runs on both, so a new test that reaches the store is
 * tested on both without anyone deciding it.
 */

/**
 * Files that never ask the test helpers which store this run tests: pure logic and files on disk, or
 * files that choose their stores themselves (the store contract runs each case on both, the lowdb
 * layout tests pin lowdb, the multi-server tests need PostgreSQL). A second pass would run them again
 * to the same end: they run once, with TEST_STORE=none, and one that asks anyway fails
 * (tests/helpers/postgres.ts).
 */
export const RUN_ONCE: readonly string[] = [
  // Pure logic, files on disk, a runtime of their own.
  'tests/unit/body-diff.test.ts',
  'tests/unit/chart-table.test.ts',
  'tests/unit/compress.test.ts',
  'tests/unit/env-example.test.ts',
  'tests/unit/html.test.ts',
  'tests/unit/ingest-parse.test.ts',
  'tests/unit/ingest-scheduler.test.ts',
  'tests/unit/job-picking.test.ts',
  'tests/unit/layers.test.ts',
  'tests/unit/member-stats.test.ts',
  'tests/unit/out-dir.test.ts',
  'tests/unit/process-wide.test.ts',
  'tests/unit/publishing-activity.test.ts',
  'tests/unit/publishing-format.test.ts',
  'tests/unit/purge.test.ts',
  'tests/unit/reconcile.test.ts',
  'tests/unit/render-journal.test.ts',
  'tests/unit/render-thread.test.ts',
  'tests/unit/safe-fetch.test.ts',
  'tests/unit/search-tiers.test.ts',
  'tests/unit/secrets.test.ts',
  'tests/unit/seed.test.ts',
  'tests/unit/server-flags.test.ts',
  'tests/unit/static-swap.test.ts',
  'tests/unit/store-plan.test.ts',
  'tests/unit/teaser.test.ts',
  'tests/unit/store-sorted-list.test.ts',
  'tests/unit/version.test.ts',
  'tests/unit/visual-editor-rules.test.ts',
  // Both stores in one pass: each case is run on lowdb and on a database of its own.
  'tests/unit/store.test.ts',
  'tests/unit/store-members.test.ts',
  'tests/unit/shared-pages.test.ts',
  'tests/unit/store-listing-snapshot.test.ts',
  'tests/unit/store-transfer.test.ts',
  'tests/unit/worker-lease.test.ts',
  // PostgreSQL, on databases of their own: what servers sharing one database do.
  'tests/unit/ingest-scheduler-shared.test.ts',
  'tests/unit/store-pg-connection.test.ts',
  'tests/unit/store-pg-migrate.test.ts',
  'tests/unit/store-pg-shared.test.ts',
  'tests/api/multi-server.test.ts',
  'tests/api/rebuild-multi-server.test.ts',
  'tests/api/shared-redraw.test.ts',
  // On lowdb whatever the run: its own files (layout, migration, bodies, votes, locks, a full disk), and logic pinned to it.
  'tests/unit/lock.test.ts',
  'tests/unit/machine-files.test.ts',
  'tests/unit/publishing.test.ts',
  'tests/unit/store-bodies.test.ts',
  'tests/unit/store-full-disk.test.ts',
  'tests/unit/store-layout.test.ts',
  'tests/unit/store-migration.test.ts',
  'tests/unit/store-vote-split.test.ts',
  'tests/unit/store-votes.test.ts',
  'tests/unit/user-script.test.ts',
  'tests/unit/view-recorder-retry.test.ts',
];

/** Files that start servers or stores but whose subject is not the store: they run on lowdb only, each for the reason given. */
export const LOWDB_ONLY: Readonly<Record<string, string>> = {
  'tests/api/database-outage.test.ts': 'its subject is PostgreSQL going down: it starts and stops a cluster of its own',
  'tests/api/readiness-database.test.ts': 'its subject is PostgreSQL going down: it starts and stops a cluster of its own',
  'tests/api/doctor.test.ts': 'it checks configurations, PostgreSQL among them, on a database of its own',
  'tests/api/deploy.test.ts': "what deploy/ ships (the systemd unit, the nginx site) and the production steps, on lowdb's files",
  'tests/api/install.test.ts': 'a production install from scratch: npm ci, a build and a start, whatever the store',
  'tests/api/compression.test.ts': 'the static files and their brotli and gzip twins, read from the served folder',
  'tests/api/nginx-front.test.ts': 'nginx serving the built pages from disk in front of the server',
  'tests/api/prometheus.test.ts': 'a real Prometheus scraping the metrics endpoint',
  'tests/api/thread-priority.test.ts': "the nice values of the server's threads and of Pagefind's indexing process",
  'tests/api/search-indexer-crash.test.ts': "Pagefind's indexing process killed mid-build; it indexes the served files, not the store",
  'tests/hardening/headers.test.ts': 'the security headers and the Content-Security-Policy of every answer',
};
