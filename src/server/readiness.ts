/**
 * Whether this server should get traffic (`/api/ready`): store answers and migrated, served folder
 * complete, no stop under way, nothing degraded (runtime.health: a full disk, ...).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Runtime } from './runtime.ts';
import { withTimeout } from './metrics.ts';
import { queueDepth } from './publishing/service.ts';
import { APP_VERSION } from './version.ts';
import type { DegradedState } from './health.ts';

export type Readiness = {
  ready: boolean;
  /** Why not, when not ready. */
  reason?: string;
  version: string;
  uptimeS: number;
  store: 'lowdb' | 'postgres';
  /** Regeneration jobs waiting; null when the store did not answer. */
  queue: number | null;
  /** What is degraded now (a full disk, ...), each with why and since when; absent when nothing is. */
  degraded?: DegradedState[];
};

/** How long the store check may take: a database that hangs is as good as down. */
const STORE_CHECK_TIMEOUT_MS = 1000;

/** What a served folder holds once a build is complete: a page, the 404 page and the assets. */
const SERVED_FOLDER_KEYS = ['section/world/index.html', '404.html', '_astro'];

/** The first reason this server should not get traffic, or undefined when it should. */
async function notReadyBecause(runtime: Runtime): Promise<string | undefined> {
  if (runtime.draining) return 'draining: the server is stopping';
  const degraded = runtime.health.list();
  if (degraded.length) return degraded.map((state) => state.message).join('; ');
  const store = await withTimeout(runtime.store.check(), STORE_CHECK_TIMEOUT_MS, 'the store').catch((error: Error) => ({
    ok: false as const,
    reason: error.message,
  }));
  if (!store.ok) return `store: ${store.reason}`;
  if (!runtime.servedDir) return 'starting: the server does not listen yet';
  const missing = SERVED_FOLDER_KEYS.filter((key) => !fs.existsSync(path.join(runtime.servedDir!, key)));
  if (missing.length) return `served folder incomplete: ${missing.join(', ')} missing in ${runtime.servedDir}`;
  return undefined;
}

export async function checkReadiness(runtime: Runtime): Promise<Readiness> {
  const reason = await notReadyBecause(runtime);
  return {
    ready: reason === undefined,
    ...(reason === undefined ? {} : { reason }),
    version: APP_VERSION,
    uptimeS: Math.round((Date.now() - runtime.startedAt) / 1000),
    store: runtime.store.kind,
    queue: reason?.startsWith('store:') ? null : await queueDepth(runtime),
    ...(runtime.health.list().length ? { degraded: runtime.health.list() } : {}),
  };
}
