/**
 * The specs' `test` and `expect`: every Playwright worker gets a demo site of its own, started the way
 * the README's quick start does (`npm start`, SEED=demo) on the suite's build, with its own port, data
 * folder and served folder, on its project's store (lowdb, or a database of its own on the run's cluster).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test as base } from '@playwright/test';
import { freePort, SERVER_NODE_FLAGS, waitForListening } from '../../scripts/server-process.ts';
import { ADMIN_URL_ENV, createDatabase } from '../helpers/postgres.ts';
import { ROOT, siteCopyFor, TEST_SITE_URL } from '../helpers/server.ts';
import { recordServerOutput } from '../helpers/server-logs.ts';
import { startStripeFake, type StripeFake } from '../helpers/stripe-fake.ts';

export { expect };

export const E2E_ADMIN = { username: 'admin', password: 'e2e-admin-password' };

/** The stores a project's sites run on (playwright.config.ts names each project's in its metadata). */
export type SiteStore = 'lowdb' | 'pg';

export type Site = {
  /** Where it listens. */
  url: string;
  /** Its SITE_URL, the suite build's: what its pages, feeds and mails make absolute links from. */
  siteUrl: string;
  /** Its DATA_DIR: the outbox holds the mails it sent. */
  dataDir: string;
  /** The folder it serves and regenerates pages into. */
  clientDir: string;
  /** Its database on PostgreSQL; undefined on lowdb. */
  databaseUrl: string | undefined;
};

/** Whether the site at `url` has nothing left to draw (GET /api/health: no job queued, no page left to reconcile). */
export async function siteIsIdle(url: string): Promise<boolean> {
  const health = (await (await fetch(`${url}/api/health`)).json()) as { jobs: number; reconciling: number };
  return health.jobs === 0 && health.reconciling === 0;
}

/** Starts a demo site and waits until its worker has drawn every page of the demo content. */
async function startSite(
  store: SiteStore,
  label: string,
  extraEnv: Record<string, string> = {},
): Promise<Site & { stop: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `meridian-e2e-${label}-`));
  const clientDir = siteCopyFor(dataDir);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let databaseUrl: string | undefined;
  if (store === 'pg') {
    const adminUrl = process.env[ADMIN_URL_ENV];
    if (!adminUrl) throw new Error(`The PostgreSQL project needs the run's cluster (${ADMIN_URL_ENV}); run it through npm run test:e2e.`);
    databaseUrl = await createDatabase(adminUrl, `e2e_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    // The build's, so the fixed pages it prerendered need no build of their own; Chromium is sent to `url`.
    SITE_URL: TEST_SITE_URL,
    DATA_DIR: dataDir,
    SERVE_DIR: clientDir,
    SEED: 'demo',
    ADMIN_USERNAME: E2E_ADMIN.username,
    ADMIN_PASSWORD: E2E_ADMIN.password,
    FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
    // Every spec posts comments and votes from the same 127.0.0.1; the limits themselves are tested in tests/api and tests/hardening.
    RATE_LIMIT_FACTOR: '20',
    // Paid subscriptions against the worker's Stripe stand-in (issue 48).
    ...extraEnv,
  };
  // A DATABASE_URL left in the shell must not move a lowdb site onto that database (and seed it).
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(ROOT, 'scripts/start.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  recordServerOutput(child, `e2e-${label}`);
  const { exited, output } = await waitForListening(child, 180_000, 200_000);
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  // The served folder is a copy of the build's: the site draws the demo content's pages as it starts.
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (await siteIsIdle(url)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`The e2e site drew no complete demo site in 180 s:\n${output().slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, siteUrl: TEST_SITE_URL, dataDir, clientDir, databaseUrl, stop };
}

/**
 * `site` is the worker's (hooks may use it too); `baseURL` is its address. `stripe` is the local stand-in of
 * Stripe the site takes payments through (tests/helpers/stripe-fake.ts): its hosted pages send the browser
 * back to the site's SITE_URL, which is mapped to where the site listens.
 */
export type SiteStripe = StripeFake & {
  /** Sends events to the site listening at `url`, and the browser back to it from the hosted pages. */
  attach(url: string): void;
};

export const test = base.extend<object, { site: Site; stripe: SiteStripe }>({
  stripe: [
    // Playwright reads a fixture's dependencies from its first parameter's pattern: an empty one says it has none.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      let listening = TEST_SITE_URL;
      const fake = await startStripeFake({ siteUrl: (url) => url.replace(TEST_SITE_URL, listening) });
      const attach = (url: string) => {
        listening = url;
        fake.setWebhookUrl(`${url}/api/members/stripe-webhook`);
      };
      await use(Object.assign(fake, { attach }));
      await fake.close();
    },
    { scope: 'worker' },
  ],
  site: [
    async ({ stripe }, use, workerInfo) => {
      const store = workerInfo.project.metadata.store as SiteStore;
      const { stop, ...site } = await startSite(store, `${workerInfo.project.name}-${workerInfo.parallelIndex}`, stripe.env);
      stripe.attach(site.url);
      await use(site);
      await stop();
    },
    { scope: 'worker', timeout: 240_000 },
  ],
  baseURL: async ({ site }, use) => use(site.url),
});
