/** Background services that run inside the server process (scheduler, regeneration worker, feed fetcher). */
import type { Runtime } from './runtime.ts';

/** Starts every background service and registers it on the runtime so stopRuntime() stops it. */
export async function startBackgroundServices(_runtime: Runtime): Promise<void> {
  // Services are added here by the publishing pipeline and the feed ingestion.
}
