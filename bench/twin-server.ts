/**
 * Bench only: starts scripts/serve.ts after fixing this process's render secret and handing it to the
 * bench (a 0600 file named by BENCH_SECRET_FILE), so the bench can time the on-demand twin routes.
 * The production server never does this; its secret stays random and in memory.
 */
import fs from 'node:fs';
import { renderSecret } from '../src/server/publishing/render-secret.ts';

const file = process.env.BENCH_SECRET_FILE;
if (!file) throw new Error('BENCH_SECRET_FILE is required');
// The secret lives on globalThis, so the Astro bundle's twin routes see this same value.
fs.writeFileSync(file, renderSecret(), { mode: 0o600 });
await import('../scripts/serve.ts');
