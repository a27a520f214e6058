/** The adversarial suite (`npm run test:hardening`): attacks the real built server; its own config so `npm test` stays fast. */
import { defineConfig } from 'vitest/config';

// Its own build folder (never dist/, which `npm start` serves); `npm test` passes TEST_OUT_DIR to reuse its build.
process.env.OUT_DIR = process.env.TEST_OUT_DIR ?? '.out/hardening';

export default defineConfig({
  test: {
    include: ['tests/hardening/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Each file starts its own servers (and some a Chromium): two at a time on a 2-core machine.
    maxWorkers: 2,
    globalSetup: ['tests/helpers/postgres.ts', 'tests/helpers/global-setup.ts'],
  },
});
