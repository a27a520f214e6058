/** Background services that run inside the server process (scheduler, regeneration worker, feed fetcher). */
import type { Runtime } from './runtime.ts';
import { startFeedScheduler } from './ingest/feed-scheduler.ts';
import { startPublishing } from './publishing/service.ts';
import { startBriefingScheduler } from './briefing/service.ts';
import { startTrashPurge } from './trash.ts';
import { checkBackupDir, startBackupScheduler } from './backup/schedule.ts';

/** Starts every background service and registers it on the runtime so stopRuntime() stops it. */
export async function startBackgroundServices(runtime: Runtime): Promise<void> {
  // Services are added here by the publishing pipeline and the feed ingestion.
  runtime.services.set('feed-scheduler', startFeedScheduler(runtime));
  // Publishing: article hook -> stored jobs, scheduled publishing; its worker starts once the server listens.
  startPublishing(runtime);
  // The weekday briefing (BRIEFING_TIME in BRIEFING_TZ); also resumes one a restart interrupted.
  runtime.services.set('briefing-scheduler', await startBriefingScheduler(runtime));
  // Trashed articles older than 30 days are purged (issue 14); `npm run rebuild` purges too.
  runtime.services.set('trash-purge', startTrashPurge(runtime));
  // Daily backups into BACKUP_DIR (unset: none); the folder is checked now, not at BACKUP_TIME.
  if (runtime.config.BACKUP_DIR) {
    checkBackupDir(runtime.config.BACKUP_DIR);
    runtime.services.set('backup-scheduler', startBackupScheduler(runtime));
  }
}
