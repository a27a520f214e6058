import { defineConfig, devices } from '@playwright/test';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { SERVER_NODE_FLAGS } from './scripts/server-process.ts';

/**
 * E2E runs against the real server started by `npm start` on a demo-seeded DATA_DIR of its own,
 * built into and served from a folder of its own (.out/e2e), so a site running from dist/ is never touched.
 * E2E_DATABASE_URL puts that server on PostgreSQL (an empty database, which it seeds); without it the
 * server keeps the lowdb store in DATA_DIR, whatever DATABASE_URL the shell has.
 */
const PORT = Number(process.env.E2E_PORT ?? 4399);
const outDir = path.resolve(import.meta.dirname, process.env.E2E_OUT_DIR ?? '.out/e2e');
const dataDir = process.env.E2E_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-e2e-'));
// Workers load this file again: through the environment they inherit, they find the same folder (and its outbox).
process.env.E2E_DATA_DIR = dataDir;
/** The e2e server's DATA_DIR: its outbox holds the mails it sent. */
export const E2E_DATA_DIR = dataDir;
const databaseUrl = process.env.E2E_DATABASE_URL;
// Playwright starts the server with this process's environment under the env below: a DATABASE_URL
// left in the shell would otherwise move the lowdb pass onto that database (and seed it).
delete process.env.DATABASE_URL;
export const E2E_ADMIN = { username: 'admin', password: 'e2e-admin-password' };

export default defineConfig({
  testDir: 'tests/e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 7_000 },
  reporter: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['list'], ['json']] : [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
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
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], channel: undefined } }],
  webServer: {
    command: [JSON.stringify(process.execPath), ...SERVER_NODE_FLAGS, 'scripts/start.ts'].join(' '),
    url: `http://127.0.0.1:${PORT}/api/health`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    env: {
      PORT: String(PORT),
      HOST: '127.0.0.1',
      SITE_URL: `http://127.0.0.1:${PORT}`,
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      OUT_DIR: outDir,
      SERVE_DIR: path.join(outDir, 'client'),
      SEED: 'demo',
      ADMIN_USERNAME: E2E_ADMIN.username,
      ADMIN_PASSWORD: E2E_ADMIN.password,
      FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
      // Every spec posts comments and votes from the same 127.0.0.1; the limits themselves are tested in tests/api and tests/hardening.
      RATE_LIMIT_FACTOR: '20',
    },
  },
});
