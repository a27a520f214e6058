/** Opens the configured store implementation; everything above this line is unaware which one runs. */
import type { Store, StoreMode } from './types.ts';
import { openLowdbStore } from './lowdb/index.ts';
import { lockHolder } from './lock-file.ts';

export type { Store, StoreMode } from './types.ts';
export { StoreLockedError } from './types.ts';

export async function openStore(dataDir: string, mode: StoreMode = 'write'): Promise<Store> {
  return openLowdbStore(dataDir, mode);
}

/** The pid of the live process that has the store in `dataDir` open for writing (a running server), if any. */
export function storeWriterPid(dataDir: string): number | undefined {
  return lockHolder(dataDir);
}
