/**
 * The briefing inside the server: the weekday schedule, and the secret-guarded internal call through
 * which `npm run briefing` asks a running server (which holds the DATA_DIR lock) to send.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isSameSecret, signMessage } from '../../security/secrets.ts';
import type { Runtime } from '../runtime.ts';
import { getAppSecret } from '../images/upload-urls.ts';
import { nowMs } from '../clock.ts';
import { PAUSE_RETRY_AFTER_S, runBriefing } from './briefing.ts';
import { isBriefingDue, localTime } from './clock.ts';
import { isStoreUnavailable } from '../../store/index.ts';
import { errorMessage, logOncePerMinute } from '../log.ts';

/** How often the schedule looks at the clock. */
const TICK_MS = 30_000;

/** Written by a listening server into DATA_DIR, so a script that finds the lock taken knows whom to ask. */
const ADDRESS_FILE = '.server.json';

export type ServerAddress = { pid: number; origin: string };

/** The key the internal briefing call carries: an HMAC of the app secret, so the secret itself never travels. */
export function briefingKey(secret: string): string {
  return signMessage(secret, 'meridian-news:internal-briefing-run');
}

export async function isBriefingKeyValid(runtime: Runtime, presented: string | null): Promise<boolean> {
  if (!presented) return false;
  return isSameSecret(presented, briefingKey(await getAppSecret(runtime)));
}

export function announceServer(dataDir: string, origin: string): void {
  const file = path.join(path.resolve(dataDir), ADDRESS_FILE);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify({ pid: process.pid, origin } satisfies ServerAddress));
  fs.renameSync(temp, file);
}

export function readServerAddress(dataDir: string): ServerAddress | undefined {
  try {
    const data = JSON.parse(fs.readFileSync(path.join(path.resolve(dataDir), ADDRESS_FILE), 'utf8')) as Partial<ServerAddress>;
    return typeof data.pid === 'number' && typeof data.origin === 'string' ? { pid: data.pid, origin: data.origin } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends the briefing when it is due, and resumes a run of today that a restart interrupted (also
 * with `BRIEFING_TIME=off`, where cron starts the runs: the next cron run would be tomorrow).
 * "Due" reads the server's clock (src/server/clock.ts) and the day's runs in the store, so a clock
 * that jumps, forward or back, over BRIEFING_TIME or midnight still gives one run a day: a day that
 * has a run never gets another from the schedule. `tick` looks now (tests move the clock, then tick).
 */
export async function startBriefingScheduler(runtime: Runtime): Promise<{ stop(): void; tick(): Promise<void> }> {
  // The secret must exist before a script reads it to call us.
  await getAppSecret(runtime);
  const time = runtime.config.BRIEFING_TIME;
  let running: Promise<void> | undefined;
  /** After a paused run (mail server down), no new try before this (performance.now(): a clock moved back must not stretch the wait). */
  let quietUntil = 0;
  const tick = (): Promise<void> => {
    if (running || performance.now() < quietUntil) return running ?? Promise.resolve();
    running = (async () => {
      try {
        const now = new Date(nowMs());
        const local = localTime(now, runtime.config.BRIEFING_TZ);
        const runs = await runtime.store.briefings.runsFor(local.date);
        const unfinished = runs.some((r) => r.status === 'sending');
        const due = time !== 'off' && runs.length === 0 && isBriefingDue(local, time);
        if (unfinished || due) await runBriefing(runtime, { trigger: 'schedule', now });
      } catch (error) {
        if (isStoreUnavailable(error)) {
          // The database went away: the run (recorded as sending) resumes at the first tick it answers again.
          logOncePerMinute(
            runtime.log,
            'briefing-store-unavailable',
            { component: 'briefing', err: errorMessage(error) },
            `[briefing] scheduled run waits for the store: ${errorMessage(error)}`,
          );
          return;
        }
        quietUntil = performance.now() + PAUSE_RETRY_AFTER_S * 1000;
        runtime.log.error(
          { component: 'briefing', err: error },
          `[briefing] scheduled run stopped: ${(error as Error).message ?? String(error)}`,
        );
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const first = setTimeout(() => void tick(), 1_000);
  const timer = setInterval(() => void tick(), TICK_MS);
  first.unref();
  timer.unref();
  return {
    tick,
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
