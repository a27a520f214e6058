/**
 * The morning briefing: picks the digest, and sends it to confirmed subscribers exactly once a day,
 * resumable from a per-recipient send log.
 *
 * At most once per recipient and run: a recipient is logged `attempting` (on disk) before the SMTP
 * transaction starts and `sent` once the server accepted it. A run interrupted in between (a kill)
 * cannot know whether the server accepted that message, so a resume never retries it and counts it
 * as `unknown`: losing one copy is better than sending it twice. The window is the messages in
 * flight at the moment of the kill (at most CONCURRENCY). The same holds for a connection lost
 * mid-transaction. A recipient the server refused for now (4xx) or could not be reached for is
 * tried again at once (1 s, then 4 s later), and by the next run: a run with such recipients left
 * is paused, not finished (after PAUSE_AFTER failures in a row at once: the mail server is down), and
 * resumes later, for up to RETRY_WINDOW_MS after it started.
 */
import { maskEmail } from '../log.ts';
import { hostname } from 'node:os';
import type { Runtime } from '../runtime.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { BriefingRun, BriefingSummary, Delivery, Subscriber } from '../../schemas/newsletter.ts';
import { briefingSubject, renderBriefingMail, type BriefingContent, type RenderedMail } from '../mail/templates.ts';
import { classifyMailError, sendWithinBudget, sendWithRetry, type Mailer } from '../mail/transport.ts';
import { ServiceUnavailableError } from '../errors.ts';
import { nowIso, nowMs } from '../clock.ts';
import { useMailer } from '../mail/mailer.ts';
import { unsubscribeUrls } from '../newsletter.ts';
import { localTime } from './clock.ts';

/** How many editor's picks and other top stories a briefing carries. */
const MAX_PICKS = 5;
const MAX_TOP = 8;
/** Recipients per batch (the send log is read and the run's counts saved per batch) and SMTP sends in flight at once. */
export const BATCH_SIZE = 50;
export const CONCURRENCY = 3;
/** Consecutive recipients that could not be handed over before a run pauses. */
export const PAUSE_AFTER = 5;
/** How long after a run started a recipient refused for now is still tried again: a morning briefing is not sent in the evening. */
export const RETRY_WINDOW_MS = 6 * 60 * 60_000;
/** How soon a paused run is worth resuming (the scheduler waits this long; `npm run briefing` may be run again then). */
export const PAUSE_RETRY_AFTER_S = 5 * 60;
/** Without an earlier briefing, the first one covers this much. */
const FIRST_WINDOW_MS = 24 * 60 * 60_000;

/** The digest for the window starting at `since`: editor's picks, then the most read and liked of the rest. */
export async function selectBriefingArticles(
  runtime: Runtime,
  since: string,
  until: string,
): Promise<{ picks: ArticleRecord[]; top: ArticleRecord[] }> {
  const { store } = runtime;
  const recent = await store.articles.list(
    { statuses: ['published'], dateFrom: since, dateTo: until },
    { offset: 0, limit: 500 },
    'recent',
  );
  const picks = recent.filter((a) => a.isEditorsPick).slice(0, MAX_PICKS);
  const rest = recent.filter((a) => !a.isEditorsPick);
  const counters = await store.counters.getMany(rest.map((a) => a.id));
  // A like counts as ten views, as on the site's own ranking.
  const score = (a: ArticleRecord) => {
    const c = counters.get(a.id);
    return (c?.views ?? 0) + 10 * (c?.likes ?? 0) + (a.isBreaking ? 50 : 0);
  };
  const top = rest
    .map((a) => ({ a, s: score(a) }))
    .sort((x, y) => y.s - x.s)
    .slice(0, MAX_TOP)
    .map((x) => x.a);
  return { picks, top };
}

async function contentOf(runtime: Runtime, run: Pick<BriefingRun, 'articleIds' | 'startedAt'>): Promise<BriefingContent> {
  const articles = (await Promise.all(run.articleIds.map((id) => runtime.store.articles.get(id)))).filter(
    (a): a is ArticleRecord => a?.status === 'published',
  );
  return {
    dateLabel: localTime(new Date(run.startedAt), runtime.config.BRIEFING_TZ).label,
    picks: articles.filter((a) => a.isEditorsPick),
    top: articles.filter((a) => !a.isEditorsPick),
  };
}

/** Where today's window starts: the last briefing of an earlier day, else 24 hours back. */
async function windowStart(runtime: Runtime, date: string, now: Date): Promise<string> {
  const runs = await runtime.store.briefings.runsFor(date);
  if (runs[0]) return runs[0].since;
  const latest = await runtime.store.briefings.latest();
  return latest && latest.date < date ? latest.startedAt : new Date(now.getTime() - FIRST_WINDOW_MS).toISOString();
}

/** The briefing as it would go out now (for the dashboard's preview and test copies). */
export async function previewBriefing(runtime: Runtime, now = new Date(nowMs())): Promise<RenderedMail & { articles: number }> {
  const local = localTime(now, runtime.config.BRIEFING_TZ);
  const since = await windowStart(runtime, local.date, now);
  const { picks, top } = await selectBriefingArticles(runtime, since, now.toISOString());
  const content = { dateLabel: local.label, picks, top };
  const mail = renderBriefingMail(runtime.config, content, unsubscribeUrls(runtime, { token: 'preview' }).page);
  return { ...mail, articles: picks.length + top.length };
}

/** Sends the current briefing to one address, marked as a test (no send log, no unsubscribe token of a subscriber). */
export async function sendTestCopy(runtime: Runtime, email: string): Promise<void> {
  const mail = await previewBriefing(runtime);
  try {
    await sendWithinBudget(
      useMailer(runtime),
      { to: email, subject: `[Test] ${mail.subject}`, html: mail.html, text: mail.text },
      runtime.config.SMTP_TIMEOUT_MS,
    );
  } catch (error) {
    throw new ServiceUnavailableError(
      `The mail server did not take the test copy (${classifyMailError(error).message}); try again in a few minutes.`,
      {
        retryAfterS: 60,
        cause: error,
      },
    );
  }
}

function messageIdFor(runtime: Runtime, runId: string, subscriberId: string): string {
  const host = new URL(runtime.config.SITE_URL).hostname || hostname();
  return `<briefing-${runId}-${subscriberId}@${host}>`;
}

/** The recipient's new log entry, or undefined when it must stay `attempting` (it may have been accepted). */
async function deliverOne(
  runtime: Runtime,
  mailer: Mailer,
  run: BriefingRun,
  content: BriefingContent,
  subscriber: Subscriber,
): Promise<Delivery | undefined> {
  const urls = unsubscribeUrls(runtime, subscriber);
  const mail = renderBriefingMail(runtime.config, content, urls.page);
  try {
    const { messageId } = await sendWithRetry(mailer, {
      to: subscriber.email,
      ...mail,
      // The same Message-ID for a recipient within a run lets a receiver spot a copy, should one ever slip through.
      messageId: messageIdFor(runtime, run.id, subscriber.id),
      headers: {
        'List-Unsubscribe': `<${urls.oneClick}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'List-Id': `${runtime.config.SITE_NAME.replace(/[<>"]/g, '')} briefing <briefing.${new URL(runtime.config.SITE_URL).hostname}>`,
        Precedence: 'bulk',
        'Auto-Submitted': 'auto-generated',
      },
    });
    runtime.metrics.briefingDeliveries.inc({ result: 'sent' });
    return { subscriberId: subscriber.id, state: 'sent', at: nowIso(), messageId };
  } catch (error) {
    const failure = classifyMailError(error);
    runtime.metrics.briefingDeliveries.inc({ result: failure.notSent ? 'failed' : 'unknown' });
    runtime.log.warn(
      { component: 'briefing', runId: run.id, subscriberId: subscriber.id, to: maskEmail(subscriber.email), err: failure.message },
      `[briefing] ${run.id}: sending to ${maskEmail(subscriber.email)} failed: ${failure.message}`,
    );
    if (!failure.notSent) return undefined;
    // The run's age by the server's clock: a jump back keeps retrying, a jump forward gives up sooner.
    const retry = failure.temporary && nowMs() - Date.parse(run.startedAt) < RETRY_WINDOW_MS;
    return {
      subscriberId: subscriber.id,
      state: 'failed',
      at: nowIso(),
      error: failure.message.slice(0, 300),
      ...(retry ? { retry: true } : {}),
    };
  }
}

/** Runs `work` over items with at most `limit` in flight. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(workers);
}

function tally(run: BriefingRun, log: Map<string, Delivery>): BriefingRun {
  let sent = 0;
  let failed = 0;
  let unknown = 0;
  for (const d of log.values()) {
    if (d.state === 'sent') sent++;
    else if (d.state === 'failed') failed++;
    else unknown++;
  }
  // (A failed recipient marked for retry that a later run still could not reach stays counted as failed.)
  return { ...run, sent, failed, unknown };
}

/** Sends every confirmed subscriber not yet in the run's log; answers the run with its final counts. */
async function sendRun(runtime: Runtime, run: BriefingRun): Promise<{ run: BriefingRun; skipped: number }> {
  const { store } = runtime;
  const content = await contentOf(runtime, run);
  const mailer = useMailer(runtime);
  const recipients = await store.subscribers.listConfirmed();
  const before = await store.briefings.deliveries(run.id);
  // Already sent, failed for good, or interrupted mid-send (unknown): none of these is sent again.
  // Only a recipient the mail server certainly did not take (refused for now, unreachable) is retried.
  const todo = recipients.filter((s) => {
    const logged = before.get(s.id);
    return !logged || (logged.state === 'failed' && logged.retry === true);
  });
  let current: BriefingRun = { ...run, recipients: Math.max(run.recipients, before.size + todo.filter((s) => !before.has(s.id)).length) };
  let failuresInARow = 0;
  let lastError = '';
  /** Unsubscribed or removed since the list was read: never waited for. */
  const gone = new Set<string>();
  for (let i = 0; i < todo.length && failuresInARow < PAUSE_AFTER; i += BATCH_SIZE) {
    const batch = todo.slice(i, i + BATCH_SIZE);
    await eachLimited(batch, CONCURRENCY, async (subscriber) => {
      if (failuresInARow >= PAUSE_AFTER) return;
      // Someone may have unsubscribed since the list was read.
      const fresh = await store.subscribers.get(subscriber.id);
      if (!fresh || fresh.unsubscribedAt) {
        gone.add(subscriber.id);
        return;
      }
      // `attempting` is on disk before the message goes out, and only one caller (of any server) gets to record it.
      if (!(await store.briefings.claimDelivery(run.id, fresh.id, nowIso()))) return;
      const result = await deliverOne(runtime, mailer, current, content, fresh);
      if (result) await store.briefings.recordDeliveries(run.id, [result]);
      if (result?.state === 'sent' || (result?.state === 'failed' && !result.retry)) failuresInARow = 0;
      else {
        failuresInARow++;
        lastError = result?.error ?? 'connection lost during the transaction';
      }
    });
    current = tally(current, await store.briefings.deliveries(run.id));
    await store.briefings.saveRun(current);
  }
  if (failuresInARow >= PAUSE_AFTER) {
    // The run stays `sending`: the next `npm run briefing`, or the server within minutes, resumes it.
    throw new ServiceUnavailableError(
      `The mail server failed ${PAUSE_AFTER} recipients in a row (${lastError}); the briefing ${run.id} is paused and resumes with the next run.`,
      { retryAfterS: PAUSE_RETRY_AFTER_S },
    );
  }
  const log = await store.briefings.deliveries(run.id);
  // Only those still subscribed: one who left since is not waited for.
  const tried = new Set(todo.map((s) => s.id).filter((id) => !gone.has(id)));
  const waiting = [...log.values()].filter((d) => d.state === 'failed' && d.retry === true && tried.has(d.subscriberId)).length;
  if (waiting > 0) {
    // Refused for now (4xx) or unreachable, but not five in a row: the next run tries them again.
    throw new ServiceUnavailableError(
      `The mail server could not take ${waiting} recipient(s) for now (${lastError}); the briefing ${run.id} is paused and resumes with the next run.`,
      { retryAfterS: PAUSE_RETRY_AFTER_S },
    );
  }
  const finished = {
    ...tally(current, log),
    status: 'sent' as const,
    finishedAt: nowIso(),
  };
  await store.briefings.saveRun(finished);
  return { run: finished, skipped: recipients.length - todo.length };
}

/** Another server started this run first (several servers on one database): it sends; this one reports it. */
async function startedElsewhere(runtime: Runtime, mine: BriefingRun): Promise<BriefingSummary> {
  const theirs = (await runtime.store.briefings.runsFor(mine.date)).find((r) => r.id === mine.id) ?? mine;
  runtime.log.info({ component: 'briefing', runId: mine.id }, `[briefing] ${mine.id} was started by another server`);
  return summaryOf(theirs, 'already-sent', 0);
}

function summaryOf(run: BriefingRun, outcome: BriefingSummary['outcome'], skipped: number): BriefingSummary {
  return {
    date: run.date,
    runId: run.id,
    outcome,
    recipients: run.recipients,
    sent: run.sent,
    skipped,
    failed: run.failed,
    unknown: run.unknown,
  };
}

export type RunOptions = { force?: boolean; trigger: BriefingRun['trigger']; now?: Date };

/**
 * Today's briefing: resumes an unfinished run of today, does nothing when today's went out (unless
 * forced, which starts a new run), else starts one. One call at a time per process; the store's lock
 * keeps other processes out.
 */
export function runBriefing(runtime: Runtime, options: RunOptions): Promise<BriefingSummary> {
  // The turn is the runtime's: the scheduler and the internal endpoint may be different copies of this module.
  const run = runtime.briefingTurn.then(() => runBriefingNow(runtime, options));
  runtime.briefingTurn = run.catch(() => {});
  return run;
}

async function runBriefingNow(runtime: Runtime, options: RunOptions): Promise<BriefingSummary> {
  const now = options.now ?? new Date(nowMs());
  const local = localTime(now, runtime.config.BRIEFING_TZ);
  const runs = await runtime.store.briefings.runsFor(local.date);
  const unfinished = runs.find((r) => r.status === 'sending');
  if (unfinished) {
    runtime.log.info({ component: 'briefing', runId: unfinished.id }, `[briefing] resuming ${unfinished.id}`);
    const { run, skipped } = await sendRun(runtime, unfinished);
    return summaryOf(run, 'sent', skipped);
  }
  const done = runs.findLast((r) => r.status === 'sent');
  if (done && !options.force) return summaryOf(done, 'already-sent', 0);

  const since = await windowStart(runtime, local.date, now);
  const { picks, top } = await selectBriefingArticles(runtime, since, now.toISOString());
  const recipients = await runtime.store.subscribers.listConfirmed();
  const base: BriefingRun = {
    id: `${local.date}-${runs.length + 1}`,
    date: local.date,
    forced: done !== undefined,
    trigger: options.trigger,
    status: 'sending',
    startedAt: now.toISOString(),
    since,
    subject: briefingSubject(runtime.config, { dateLabel: local.label, picks, top }),
    articleIds: [...picks, ...top].map((a) => a.id),
    recipients: recipients.length,
    sent: 0,
    failed: 0,
    unknown: 0,
  };
  if (base.articleIds.length === 0 || recipients.length === 0) {
    // Nothing to send is today's answer too: the scheduler does not ask again every minute.
    const empty = { ...base, status: 'sent' as const, finishedAt: now.toISOString() };
    if (!(await runtime.store.briefings.startRun(empty))) return startedElsewhere(runtime, empty);
    return summaryOf(empty, base.articleIds.length === 0 ? 'no-articles' : 'no-subscribers', 0);
  }
  // The run is on disk before the first message: a restart finds it and resumes.
  if (!(await runtime.store.briefings.startRun(base))) return startedElsewhere(runtime, base);
  const log = runtime.log.child({ component: 'briefing', runId: base.id });
  log.info(
    { articles: base.articleIds.length, recipients: recipients.length, trigger: base.trigger },
    `[briefing] ${base.id}: ${base.articleIds.length} articles to ${recipients.length} subscribers`,
  );
  const { run, skipped } = await sendRun(runtime, base);
  log.info(
    { sent: run.sent, failed: run.failed, unknown: run.unknown, skipped },
    `[briefing] ${run.id}: sent ${run.sent}, failed ${run.failed}, unknown ${run.unknown}`,
  );
  return summaryOf(run, 'sent', skipped);
}
