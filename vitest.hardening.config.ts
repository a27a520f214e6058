/** The adversarial suite (`npm run test:hardening`): attacks the real built server; its own config so `npm test` stays fast. */
import { defineConfig } from 'vitest/config';

// Its own build folder, so the suite can run beside `npm test` (which builds into dist/) without clobbering it.
process.env.OUT_DIR ??= '.out/hardening';

export default defineConfig({
  test: {
    include: ['tests/hardening/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Each file starts its own servers (and some a Chromium): two at a time on a 2-core machine.
    maxWorkers: 2,
    globalSetup: ['tests/helpers/global-setup.ts'],
  },
});
