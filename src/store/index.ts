/** Opens the configured store implementation; everything above this line is unaware which one runs. */
import type { Store, StoreLog, StoreMode } from './types.ts';
import { openLowdbStore } from './lowdb/index.ts';
import { lockHolder } from './lock-file.ts';
import { layoutState } from './lowdb/migrate.ts';
import { openPgStore } from './pg/index.ts';

export type { Store, StoreCheck, StoreLog, StoreMode, VoteRecord } from './types.ts';
export { isStoreUnavailable, STORE_REPOSITORIES, StoreLockedError, StoreUnavailableError } from './types.ts';

export type StoreOptions = {
  /** A postgres:// URL selects the PostgreSQL store; unset (the default: DATABASE_URL) keeps lowdb in DATA_DIR. */
  databaseUrl?: string | undefined;
  /**
   * lowdb: build the full-text index on the first search instead of at open (a worker reading every
   * article file). For processes that write but do not search, such as `npm run rebuild`.
   * @default true for a read snapshot, false for the writer (a server)
   */
  lazyTextIndex?: boolean;
  /** Where the store reports its own work (a migration, a failed background split). @default the console */
  log?: StoreLog;
  /**
   * PostgreSQL: how long a query may wait for its answer, asked as each query starts (undefined: no
   * limit). The server limits the queries of a request, so none waits past its bound on a database
   * that hangs; a query past it fails as the store being unavailable. @default no limit
   */
  queryTimeoutMs?: () => number | undefined;
};

export async function openStore(dataDir: string, mode: StoreMode = 'write', options: StoreOptions = {}): Promise<Store> {
  const databaseUrl = 'databaseUrl' in options ? options.databaseUrl : process.env.DATABASE_URL;
  if (databaseUrl) return openPgStore(databaseUrl, dataDir, mode, options.queryTimeoutMs ? { queryTimeoutMs: options.queryTimeoutMs } : {});
  return openLowdbStore(dataDir, mode, { lazyTextIndex: options.lazyTextIndex, ...(options.log ? { log: options.log } : {}) });
}

/** The pid of the live process that has the store in `dataDir` open for writing (a running server), if any. */
export function storeWriterPid(dataDir: string): number | undefined {
  return lockHolder(dataDir);
}

/**
 * What the lowdb store finds in `dataDir`, read without opening it (no lock): `current`, `fresh` (nothing
 * yet) or `legacy` (migrated at the next start); throws on a layout this version cannot read.
 */
export function readDataDirLayout(dataDir: string): 'current' | 'fresh' | 'legacy' {
  return layoutState(dataDir);
}
