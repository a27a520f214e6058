import { defineConfig, devices } from '@playwright/test';
import { ADMIN_URL_ENV } from './tests/helpers/postgres.ts';

/**
 * E2E against the real server: every worker starts a demo site of its own through `npm start` on the
 * suite's build (.out/test, never dist/, which `npm start` serves), with its own port, data folder and
 * served folder (tests/e2e/fixtures.ts). The `lowdb` project runs every spec; with the run's PostgreSQL
 * cluster (`npm test` starts it) the `pg` project runs the specs tagged @store, those that exercise the
 * store through the browser (docs/testing.md).
 */
process.env.OUT_DIR = process.env.TEST_OUT_DIR ?? '.out/test';
const chromium = { ...devices['Desktop Chrome'], channel: undefined };
// Its own cluster and server, stopped under an open editor: PostgreSQL only.
const POSTGRES_OUTAGE = /admin-editor-outage\.spec\.ts/;

export default defineConfig({
  testDir: 'tests/e2e',
  globalSetup: './tests/helpers/global-setup.ts',
  // A spec's tests run in order on one site; two workers, each with its own site, share the two cores.
  fullyParallel: false,
  workers: 2,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 7_000 },
  reporter: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['list'], ['json']] : [['list']],
  use: {
    trace: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
        '--disable-quic',
      ],
    },
  },
  projects: [
    { name: 'lowdb', metadata: { store: 'lowdb' }, testIgnore: POSTGRES_OUTAGE, use: chromium },
    ...(process.env[ADMIN_URL_ENV] ? [{ name: 'pg', metadata: { store: 'pg' }, grep: /@store/, use: chromium }] : []),
  ],
});
