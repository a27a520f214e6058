import { configDefaults, defineConfig } from 'vitest/config';
import { LOWDB_ONLY, RUN_ONCE } from './tests/helpers/store-plan.ts';

// The suite builds and serves from a folder of its own, never dist/, so `npm start` (which serves
// dist/client) and the tests can run side by side from one checkout. TEST_OUT_DIR reuses another build.
process.env.OUT_DIR = process.env.TEST_OUT_DIR ?? '.out/test';

// Unit tests sit next to the logic or under tests/unit; API tests start the real built server.
const UNIT_AND_API = ['src/**/*.test.ts', 'tests/unit/**/*.test.ts', 'tests/api/**/*.test.ts'];
// The adversarial suite attacks the real built server: longer limits for its floods and crash rounds.
const HARDENING = ['tests/hardening/**/*.test.ts'];
const HARDENING_LIMITS = { testTimeout: 60_000, hookTimeout: 90_000 };
const lowdbOnly = Object.keys(LOWDB_ONLY);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files run side by side, each with its own servers, data and served folders on ports of their own.
    maxWorkers: 2,
    globalSetup: ['tests/helpers/postgres.ts', 'tests/helpers/global-setup.ts'],
    // Which file runs on which store: tests/helpers/store-plan.ts (docs/testing.md).
    projects: [
      { extends: true, test: { name: 'once', include: [...RUN_ONCE], env: { TEST_STORE: 'none' } } },
      {
        extends: true,
        test: { name: 'lowdb', include: UNIT_AND_API, exclude: [...configDefaults.exclude, ...RUN_ONCE], env: { TEST_STORE: 'lowdb' } },
      },
      {
        extends: true,
        test: {
          name: 'pg',
          include: UNIT_AND_API,
          exclude: [...configDefaults.exclude, ...RUN_ONCE, ...lowdbOnly],
          env: { TEST_STORE: 'pg' },
        },
      },
      { extends: true, test: { name: 'hardening-lowdb', include: HARDENING, ...HARDENING_LIMITS, env: { TEST_STORE: 'lowdb' } } },
      {
        extends: true,
        test: {
          name: 'hardening-pg',
          include: HARDENING,
          exclude: [...configDefaults.exclude, ...lowdbOnly],
          ...HARDENING_LIMITS,
          env: { TEST_STORE: 'pg' },
        },
      },
    ],
  },
});
