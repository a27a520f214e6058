import { defineConfig } from 'vitest/config';

// The suite builds and serves from a folder of its own, never dist/, so `npm start` (which serves
// dist/client) and the tests can run side by side from one checkout. TEST_OUT_DIR reuses another build.
process.env.OUT_DIR = process.env.TEST_OUT_DIR ?? '.out/test';

export default defineConfig({
  test: {
    // Unit tests sit next to the logic or under tests/unit; API tests start the real built server.
    include: ['src/**/*.test.ts', 'tests/unit/**/*.test.ts', 'tests/api/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['tests/helpers/postgres.ts', 'tests/helpers/global-setup.ts'],
  },
});
