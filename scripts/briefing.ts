/**
 * `npm run briefing [-- --force]`: sends today's morning briefing now, as cron would. When a server
 * holds DATA_DIR it asks that server (an internal call keyed with the app secret); otherwise it opens
 * the store itself. Either way the send log in DATA_DIR makes it once a day; `--force` sends again.
 */
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getConfig } from '../src/config.ts';
import { openStore } from '../src/store/index.ts';
import { storeWriterPid } from '../src/store/index.ts';
import { startRuntime, stopRuntime } from '../src/server/app.ts';
import { runBriefing } from '../src/server/briefing/briefing.ts';
import { briefingKey, readServerAddress } from '../src/server/briefing/service.ts';
import type { BriefingSummary } from '../src/schemas/newsletter.ts';

const USAGE = `Usage: npm run briefing [-- --force]

Sends today's briefing to confirmed subscribers, once a day (a second run the same day does nothing).
  --force   send it again today (a new run, to every confirmed subscriber)
Works while the server runs on the same DATA_DIR (it asks the server to send).`;

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

/** POSTs JSON without a response deadline: a large list takes minutes, and the server answers at the end. */
function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** The app secret the running server uses: APP_SECRET, else the one it keeps in DATA_DIR (read without the lock). */
async function readAppSecret(dataDir: string): Promise<string | undefined> {
  const configured = getConfig().APP_SECRET;
  if (configured) return configured;
  const store = await openStore(dataDir, 'read');
  try {
    return await store.meta.get<string>('appSecret');
  } finally {
    await store.close();
  }
}

async function askServer(dataDir: string, pid: number, force: boolean): Promise<BriefingSummary> {
  const address = readServerAddress(dataDir);
  if (!address || address.pid !== pid)
    fail(
      `The data folder ${dataDir} is in use by process ${pid}, which is not a listening Meridian server. Try again when it has started or stopped.`,
      2,
    );
  const secret = await readAppSecret(dataDir);
  if (!secret) fail('The running server has no app secret yet; try again in a few seconds.', 2);
  console.log(`The server (pid ${pid}) holds ${dataDir}: asking it to send.`);
  const { status, text } = await postJson(
    `${address.origin}/api/newsletter/briefing/run`,
    { 'X-Briefing-Key': briefingKey(secret) },
    { force },
  );
  if (status !== 200) fail(`The server answered ${status}: ${text}`);
  return JSON.parse(text) as BriefingSummary;
}

async function sendHere(force: boolean): Promise<BriefingSummary> {
  const runtime = await startRuntime(getConfig());
  try {
    return await runBriefing(runtime, { force, trigger: 'script' });
  } finally {
    await stopRuntime(runtime);
  }
}

function report(summary: BriefingSummary): void {
  const lines: Record<BriefingSummary['outcome'], string> = {
    sent: `Briefing ${summary.runId} sent`,
    'already-sent': `Today's briefing (${summary.runId}) was already sent; nothing to do (--force sends it again)`,
    'no-subscribers': 'No confirmed subscribers: nothing sent',
    'no-articles': 'No new articles since the last briefing: nothing sent',
  };
  console.log(lines[summary.outcome]);
  console.table([
    {
      date: summary.date,
      recipients: summary.recipients,
      sent: summary.sent,
      'skipped (sent before)': summary.skipped,
      failed: summary.failed,
      unknown: summary.unknown,
    },
  ]);
  if (summary.unknown > 0)
    console.log(
      `${summary.unknown} recipient(s) were being sent to when an earlier run was interrupted; they are not sent again (never twice).`,
    );
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: { force: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (parsed.values.help) {
    console.log(USAGE);
    return;
  }
  const force = parsed.values.force === true;
  const dataDir = path.resolve(getConfig().DATA_DIR);
  let summary: BriefingSummary;
  const holder = storeWriterPid(dataDir);
  if (holder !== undefined) {
    summary = await askServer(dataDir, holder, force);
  } else {
    try {
      summary = await sendHere(force);
    } catch (error) {
      // A server started between the check and the open: ask it instead.
      if ((error as Error)?.name !== 'StoreLockedError') throw error;
      const pid = storeWriterPid(dataDir);
      if (pid === undefined) throw error;
      summary = await askServer(dataDir, pid, force);
    }
  }
  report(summary);
  if (summary.failed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  // A paused run (the mail server is down) says so in one line; anything else with its stack.
  if ((error as { isAppError?: boolean })?.isAppError) console.error((error as Error).message);
  else console.error(error);
  process.exit(1);
});
