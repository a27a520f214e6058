/**
 * The end of a soak run: every acknowledged write read back through the API (votes with each visitor's
 * cookie, comments, saves by their marker, new articles), each article page checked against the store on
 * every server, the wire feed's items looked up, and the briefing's messages counted per address.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Ledger } from './ledger.ts';
import type { SoakFeeds, SoakSmtp } from './peers.ts';
import type { SoakServer } from './servers.ts';
import { send, type Session, type Story } from './traffic.ts';

export type WriteCheck = {
  /** Writes sent; acknowledged (2xx); acknowledged and read back as written; acknowledged and missing or different. */
  sent: number;
  acked: number;
  verified: number;
  lost: number;
  /** Examples of what was lost. */
  examples: string[];
  notes?: string[];
};

/** Runs `work` over items, `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

function newCheck(sent: number, acked: number): WriteCheck {
  return { sent, acked, verified: 0, lost: 0, examples: [] };
}

function lose(check: WriteCheck, example: string): void {
  check.lost++;
  if (check.examples.length < 10) check.examples.push(example);
}

export async function checkVotes(ledger: Ledger, origin: string): Promise<WriteCheck> {
  const acked = ledger.votes.filter((v) => v.acked);
  const check = newCheck(ledger.votes.length, acked.length);
  await eachLimited(acked, 8, async (vote) => {
    const reply = await send(ledger, 'api-read', origin, 'GET', `/api/articles/${vote.articleId}/vote`, { cookie: `vid=${vote.visitor}` });
    const read = reply?.status === 200 ? (reply.json() as { vote?: string }).vote : undefined;
    if (read === vote.kind) check.verified++;
    else
      lose(
        check,
        `${vote.kind} on ${vote.articleId} by ${vote.visitor.slice(0, 6)}...: read back ${read ?? `status ${reply?.status ?? 'none'}`}`,
      );
  });
  // The counters: at least the acknowledged votes, at most those plus the unacknowledged ones that may have landed.
  const perArticle = new Map<string, { acked: number; maybe: number }>();
  for (const vote of ledger.votes) {
    const key = `${vote.articleId}:${vote.kind}`;
    const row = perArticle.get(key) ?? { acked: 0, maybe: 0 };
    if (vote.acked) row.acked++;
    else row.maybe++;
    perArticle.set(key, row);
  }
  const notes: string[] = [];
  const articles = [...new Set(ledger.votes.map((v) => v.articleId))];
  await eachLimited(articles, 8, async (id) => {
    const reply = await send(ledger, 'api-read', origin, 'GET', `/api/articles/${id}/vote`);
    if (reply?.status !== 200) return void notes.push(`${id}: counters unreadable (${reply?.status ?? 'no answer'})`);
    const counters = reply.json() as { likes: number; dislikes: number };
    for (const kind of ['like', 'dislike'] as const) {
      const row = perArticle.get(`${id}:${kind}`) ?? { acked: 0, maybe: 0 };
      const value = kind === 'like' ? counters.likes : counters.dislikes;
      if (value < row.acked) notes.push(`${id}: ${value} ${kind}s, ${row.acked} acknowledged`);
      if (value > row.acked + row.maybe)
        notes.push(`${id}: ${value} ${kind}s, more than the ${row.acked + row.maybe} sent (counted twice)`);
    }
  });
  if (notes.length) check.notes = notes.slice(0, 20);
  return check;
}

export async function checkComments(ledger: Ledger, origin: string, admin: Session): Promise<WriteCheck> {
  const acked = ledger.comments.filter((c) => c.acked);
  const check = newCheck(ledger.comments.length, acked.length);
  const byArticle = Map.groupBy(acked, (c) => c.articleId);
  await eachLimited([...byArticle], 4, async ([articleId, comments]) => {
    const reply = await send(ledger, 'api-read', origin, 'GET', `/api/articles/${articleId}/comments`, { session: admin });
    const stored = reply?.status === 200 ? (reply.json() as { id: string; content: string }[]) : [];
    const byId = new Map(stored.map((c) => [c.id, c.content]));
    for (const comment of comments) {
      if (byId.get(comment.id!) === comment.content) check.verified++;
      else
        lose(
          check,
          `comment ${comment.id} on ${articleId}${reply?.status === 200 ? ' missing' : `: list answered ${reply?.status ?? 'nothing'}`}`,
        );
    }
  });
  return check;
}

/** Reads every saved article back; answers the check and each article's current body (for the page check). */
export async function checkSaves(
  ledger: Ledger,
  origin: string,
  admin: Session,
): Promise<{ check: WriteCheck; bodies: Map<string, string> }> {
  const all = [...ledger.saves.values()].flat();
  const check = newCheck(all.length, all.filter((a) => a.acked).length);
  const bodies = new Map<string, string>();
  const unackedApplied: string[] = [];
  await eachLimited([...ledger.saves], 4, async ([id, attempts]) => {
    const reply = await send(ledger, 'api-read', origin, 'GET', `/api/articles/${id}`, { session: admin });
    const body = reply?.status === 200 ? ((reply.json() as { bodyHtml?: string }).bodyHtml ?? '') : undefined;
    if (body !== undefined) bodies.set(id, body);
    const lastAcked = attempts.findLastIndex((a) => a.acked);
    const holding = attempts.findLastIndex((a) => body?.includes(`[${a.marker}]`) ?? false);
    // An acknowledged save is kept when the article holds it or a later save (which overwrote it by design).
    attempts.forEach((attempt, i) => {
      if (!attempt.acked) return;
      if (i <= holding) check.verified++;
      else
        lose(
          check,
          `${id}: ${attempt.marker} acknowledged, reads ${holding >= 0 ? attempts[holding]!.marker : body === undefined ? `status ${reply?.status ?? 'none'}` : 'none of the saves'}`,
        );
    });
    // A later save that was never acknowledged may have landed (its answer lost or refused): not a loss, but worth knowing.
    if (holding > lastAcked) unackedApplied.push(`${id}: holds ${attempts[holding]!.marker} (answered ${attempts[holding]!.status})`);
  });
  if (unackedApplied.length) check.notes = [`unacknowledged saves that landed: ${unackedApplied.length}`, ...unackedApplied.slice(0, 10)];
  return { check, bodies };
}

export async function checkCreated(ledger: Ledger, origin: string, admin: Session): Promise<WriteCheck> {
  const acked = ledger.created.filter((c) => c.acked);
  const check = newCheck(ledger.created.length, acked.length);
  await eachLimited(acked, 4, async (created) => {
    const reply = await send(ledger, 'api-read', origin, 'GET', `/api/articles/${created.id}`, { session: admin });
    if (reply?.status === 200 && (reply.json() as { title: string }).title === created.title) check.verified++;
    else lose(check, `${created.id} "${created.title}": ${reply?.status ?? 'no answer'}`);
  });
  const unacked = ledger.created.filter((c) => !c.acked).length;
  if (unacked) check.notes = [`${unacked} publish(es) not acknowledged (not looked for)`];
  return check;
}

export type PageCheck = { checked: number; stale: number; examples: string[] };

/** Each story's page on each running server shows its title and its current body's marker (what the API reads now). */
export async function checkPages(
  stories: readonly Story[],
  bodies: Map<string, string>,
  servers: readonly SoakServer[],
): Promise<PageCheck> {
  const result: PageCheck = { checked: 0, stale: 0, examples: [] };
  const pairs = servers.filter((s) => s.running()).flatMap((server) => stories.map((story) => ({ server, story })));
  await eachLimited(pairs, 8, async ({ server, story }) => {
    const marker = /\[soak-save-\d+\]/.exec(bodies.get(story.id) ?? '')?.[0];
    const response = await fetch(`${server.url}/article/${story.slug}`).catch(() => undefined);
    const text = response?.ok ? await response.text() : '';
    result.checked++;
    const escapedTitle = story.title.replace(/&/g, '&amp;');
    if (text.includes(escapedTitle) && (!marker || text.includes(marker))) return;
    result.stale++;
    if (result.examples.length < 10)
      result.examples.push(
        `${server.name} /article/${story.slug}: ${response ? `${response.status}${marker ? `, wants ${marker}` : ''}` : 'no answer'}`,
      );
  });
  return result;
}

export type FeedCheck = { served: number; stored: number; missing: number; examples: string[]; wireFetchGapMaxS: number };

/** Every item the wire feed listed is an article now (each stays in the feed for 20 fetches, so none may be missed). */
export async function checkFeed(ledger: Ledger, origin: string, feeds: SoakFeeds): Promise<FeedCheck> {
  const links = new Set<string>();
  for (let page = 1; page < 100; page++) {
    const reply = await send(ledger, 'api-read', origin, 'GET', `/api/articles?source=Soak%20Wire&pageSize=100&page=${page}`);
    if (reply?.status !== 200) break;
    const list = reply.json() as { sourceUrl?: string }[];
    for (const article of list) if (article.sourceUrl) links.add(article.sourceUrl);
    if (list.length < 100) break;
  }
  const missing = feeds.wireItems.filter((item) => !links.has(item.link));
  const gaps = feeds.wireRequests.slice(1).map((t, i) => t - feeds.wireRequests[i]!);
  return {
    served: feeds.wireItems.length,
    stored: feeds.wireItems.length - missing.length,
    missing: missing.length,
    examples: missing.slice(0, 10).map((item) => item.title),
    wireFetchGapMaxS: Math.round(Math.max(0, ...gaps) / 100) / 10,
  };
}

export type BriefingCheck = {
  subscribers: number;
  /** The answers of the run calls (a paused run is asked again once, as cron would). */
  calls: { status: number | 'no answer'; seconds: number; body: string }[];
  received: number;
  addresses: number;
  duplicates: number;
  /** What the server's last summary counted as sent (the mail server's count must match it). */
  summarySent: number | undefined;
};

export function checkBriefing(smtp: SoakSmtp, subscribers: number, calls: BriefingCheck['calls']): BriefingCheck {
  const counts = [...smtp.perAddress.entries()].filter(([address]) => address.startsWith('soak-reader'));
  const last = calls.at(-1);
  let summarySent: number | undefined;
  try {
    summarySent = last && last.status === 200 ? (JSON.parse(last.body) as { sent: number }).sent : undefined;
  } catch {
    summarySent = undefined;
  }
  return {
    subscribers,
    calls,
    received: counts.reduce((sum, [, n]) => sum + n, 0),
    addresses: counts.length,
    duplicates: counts.filter(([, n]) => n > 1).length,
    summarySent,
  };
}

export type SearchCheck = { server: string; newestBundleAt: string | null; rebuiltAfterFault: boolean }[];

/** Whether each server wrote a Pagefind bundle after `sinceMs` (wall clock): the next publish re-indexes after a killed indexer. */
export function checkSearchIndex(servers: readonly SoakServer[], sinceMs: number): SearchCheck {
  return servers.map((server) => {
    const root = path.join(server.serveDir, 'pagefind');
    let newest = 0;
    for (const name of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      const entry = path.join(root, name, 'pagefind-entry.json');
      if (!name.startsWith('.') && fs.existsSync(entry)) newest = Math.max(newest, fs.statSync(entry).mtimeMs);
    }
    return { server: server.name, newestBundleAt: newest ? new Date(newest).toISOString() : null, rebuiltAfterFault: newest > sinceMs };
  });
}
