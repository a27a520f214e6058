/**
 * Storage that cannot take a write (a full disk or quota, ENOSPC / EDQUOT; a read-only file system,
 * EROFS): one 503 with Retry-After for writers, one warning a minute in the log, and a degraded state
 * in /api/ready that a probe clears by itself once the folder takes writes again.
 */
import fs from 'node:fs';
import type { Store } from '../store/index.ts';
import { isAppError, ServiceUnavailableError } from './errors.ts';
import { logOncePerMinute, type Logger } from './log.ts';
import type { HealthRegistry } from './health.ts';
import type { Config } from '../config.ts';

/** What a fault report needs of the runtime; named here so this module does not import the runtime that imports it. */
type FaultContext = {
  config: Pick<Config, 'DATA_DIR'>;
  servedDir?: string | undefined;
  log: Logger;
  health: HealthRegistry;
};

/** The folders a server writes: DATA_DIR (the store, images, uploads) and the served folder (pages, search bundles). */
export type StorageArea = 'data' | 'served';

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
const READ_ONLY_CODE = 'EROFS';
/** How soon a writer may try again; the probe looks every 2 s. */
export const STORAGE_RETRY_AFTER_S = 10;
/** Free space under which a folder still counts as full: a page with its twins, a bundle, a few article files. */
const MIN_FREE_BYTES = 1024 * 1024;

/** The errno code of a storage fault in `error` or its causes (Pagefind reports ENOSPC as text), else undefined. */
export function storageFaultCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 6; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && (FULL_CODES.has(code) || code === READ_ONLY_CODE)) return code;
    if (/No space left on device|os error 28\b/.test((current as Error).message ?? '')) return 'ENOSPC';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether `error` is a storage fault, raw or already turned into a 503. */
export function isStorageFault(error: unknown): boolean {
  return storageFaultCode(error) !== undefined;
}

export function storageKey(area: StorageArea): string {
  return `disk:${area}`;
}

function folderOf(runtime: FaultContext, area: StorageArea): string | undefined {
  return area === 'data' ? runtime.config.DATA_DIR : runtime.servedDir;
}

/** Whether `dir` takes writes again: writable, and more than MIN_FREE_BYTES free for this process. */
export async function folderTakesWrites(dir: string): Promise<boolean> {
  try {
    await fs.promises.access(dir, fs.constants.W_OK);
    const stats = await fs.promises.statfs(dir);
    return stats.bavail * stats.bsize >= MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

/**
 * Records a storage fault of `area`: /api/ready reports it until its probe sees the folder take writes,
 * and the log says so once a minute. Answers the 503 writers get; undefined when `error` is no storage fault.
 */
export function reportStorageFault(runtime: FaultContext, area: StorageArea, error: unknown): ServiceUnavailableError | undefined {
  const code = storageFaultCode(error);
  if (!code) return undefined;
  const readOnly = code === READ_ONLY_CODE;
  const dir = folderOf(runtime, area);
  const what = area === 'data' ? 'data folder' : 'served folder';
  const state = readOnly ? 'read-only' : 'full';
  runtime.health.set(
    storageKey(area),
    area === 'data'
      ? `${what} storage is ${state} (${code}): changes are refused until it takes writes again`
      : `${what} storage is ${state} (${code}): new pages wait, the old ones stay served, until it takes writes again`,
    dir ? { probe: () => folderTakesWrites(dir) } : {},
  );
  logOncePerMinute(
    runtime.log,
    `${storageKey(area)}:${code}`,
    { component: 'storage', area, code, dir, err: (error as Error).message },
    `[storage] the ${what} ${dir ?? ''} is ${state} (${code}): ${area === 'data' ? 'writes answer 503' : 'page writes wait'} until it takes writes again (logged once a minute)`,
  );
  return new ServiceUnavailableError(
    readOnly ? 'Storage is read-only; the change was not saved.' : 'Storage is full; the change was not saved.',
    {
      retryAfterS: STORAGE_RETRY_AFTER_S,
      cause: error,
      reported: true,
    },
  );
}

/** `error` as the API should answer it: a storage fault of DATA_DIR becomes its 503 (an AppError passes as it is). */
export function asStorageError(runtime: FaultContext, error: unknown): unknown {
  if (isAppError(error)) return error;
  return reportStorageFault(runtime, 'data', error) ?? error;
}

/** The repositories of a Store whose calls may write DATA_DIR. */
const REPOSITORIES = [
  'articles',
  'counters',
  'comments',
  'sources',
  'subscribers',
  'briefings',
  'users',
  'audit',
  'sessions',
  'jobs',
  'meta',
  'revisions',
  'trash',
  'analytics',
] as const satisfies readonly (keyof Store)[];

function guardRepository<T extends object>(runtime: FaultContext, repository: T): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(repository, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || property === 'constructor') return value;
      let guarded = wrapped.get(property);
      if (!guarded) {
        const method = value as (...args: unknown[]) => unknown;
        guarded = (...args: unknown[]) => {
          const result = method.apply(target, args);
          if (!(result instanceof Promise)) return result;
          return result.catch((error: unknown) => {
            throw reportStorageFault(runtime, 'data', error) ?? error;
          });
        };
        wrapped.set(property, guarded);
      }
      return guarded;
    },
  });
}

/** `store` with every repository call's storage fault turned into the 503 and reported (the store itself never sees HTTP). */
export function guardStorageFaults(runtime: FaultContext, store: Store): Store {
  const repositories = new Map<PropertyKey, unknown>(REPOSITORIES.map((name) => [name, guardRepository(runtime, store[name])]));
  return new Proxy(store, {
    get(target, property) {
      if (repositories.has(property)) return repositories.get(property);
      return Reflect.get(target, property, target);
    },
  });
}
