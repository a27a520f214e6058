/**
 * What the soak run saw: every answer counted per phase, endpoint class and status (5xx sorted into
 * announced 503s, a server that was down, and failures), and every write with whether it was acknowledged,
 * so the end of the run can read each acknowledged one back.
 */

/** Endpoint classes, as the summary counts them. */
export const CLASSES = ['page', 'api-read', 'pageview', 'vote', 'comment', 'save', 'publish', 'login', 'briefing'] as const;
export type RequestClass = (typeof CLASSES)[number];
const WRITE_CLASSES: readonly RequestClass[] = ['vote', 'comment', 'save', 'publish'];

/** The bound: no request may hang past 10 s (the briefing call answers at the end of a run, by design). */
export const HANG_MS = 10_000;

export type Answer = {
  cls: RequestClass;
  method: string;
  path: string;
  /** 0 when no HTTP answer came (network error, or the bench's own 30 s deadline). */
  status: number;
  startedAt: number;
  endedAt: number;
  retryAfter: boolean;
  /** The answer carries X-Request-Id: it came from a server, not from nginx. */
  fromServer: boolean;
  error?: string;
  body?: string;
};

export type Verdict = 'ok' | 'announced' | 'server-down' | 'failure';

/** A time the harness itself took a server away: nginx's 5xx for it then are not the server's failures. */
export type DownWindow = { server: string; from: number; to?: number; onlyServer: boolean };

export type Vote = { articleId: string; visitor: string; kind: 'like' | 'dislike'; acked: boolean };
export type CommentWrite = { articleId: string; content: string; id?: string; acked: boolean };
export type SaveAttempt = { marker: string; acked: boolean; status: number; phase: string };
export type Created = { id?: string; slug?: string; title: string; acked: boolean; at: number; phase: string; liveMs?: number };

type Counts = Record<string, Record<string, number>>;

export class Ledger {
  phase = 'setup';
  readonly started = performance.now();
  readonly downWindows: DownWindow[] = [];
  /** phase -> class -> status key -> count */
  readonly counts: Record<string, Counts> = {};
  readonly failures: (Answer & { phase: string; why: string })[] = [];
  failureCount = 0;
  /** Failures by phase, request pattern and reason; nginx's answers while a server was down, by request pattern. */
  readonly failureKinds: Record<string, number> = {};
  readonly serverDownKinds: Record<string, { n: number; firstS: number; lastS: number }> = {};
  announced = 0;
  serverDown = 0;
  hangs = 0;
  /** Reader pages answered 2xx by nginx from disk (no X-Request-Id) or by a server. */
  readonly pagesServed = { fromDisk: 0, fromServer: 0 };
  /** Write answers in order: when each ended and whether it was a success (for recovery times). */
  readonly writeTimeline: { t: number; cls: RequestClass; ok: boolean }[] = [];

  readonly votes: Vote[] = [];
  readonly comments: CommentWrite[] = [];
  /** Per article id: every save sent, in order. */
  readonly saves = new Map<string, SaveAttempt[]>();
  readonly created: Created[] = [];
  /** A save answered 409 right after a save that failed, and the failed save's text was what the article held. */
  readonly refusedButApplied: { articleId: string; marker: string; status: number; phase: string }[] = [];
  conflicts = 0;
  sessionsLost = 0;

  /** Seconds since the run started, for the summary. */
  seconds(t: number): number {
    return Math.round((t - this.started) / 100) / 10;
  }

  /** Sorts one answer into its verdict and counts it. */
  record(answer: Answer): Verdict {
    const verdict = this.judge(answer);
    const key = statusKey(answer);
    const byClass = (this.counts[this.phase] ??= {});
    const byStatus = (byClass[answer.cls] ??= {});
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    if (answer.cls === 'page' && answer.status >= 200 && answer.status < 300)
      this.pagesServed[answer.fromServer ? 'fromServer' : 'fromDisk']++;
    if (WRITE_CLASSES.includes(answer.cls))
      this.writeTimeline.push({ t: answer.endedAt, cls: answer.cls, ok: answer.status >= 200 && answer.status < 300 });
    if (verdict === 'announced') this.announced++;
    if (verdict === 'server-down') {
      this.serverDown++;
      const kind = `${answer.method} ${patternOf(answer.path)}: ${answer.status}`;
      const seen = (this.serverDownKinds[kind] ??= { n: 0, firstS: this.seconds(answer.startedAt), lastS: 0 });
      seen.n++;
      seen.lastS = this.seconds(answer.endedAt);
    }
    if (verdict === 'failure') {
      this.failureCount++;
      const why =
        answer.status === 0
          ? `no answer (${answer.error ?? 'unknown'})`
          : answer.endedAt - answer.startedAt > HANG_MS && answer.cls !== 'briefing'
            ? `answered after ${((answer.endedAt - answer.startedAt) / 1000).toFixed(1)} s`
            : `${answer.status}${answer.fromServer ? '' : ' from nginx'}${answer.status === 503 && !answer.retryAfter ? ' without Retry-After' : ''}`;
      if (this.failures.length < 200) this.failures.push({ ...answer, phase: this.phase, why });
      const kind = `[${this.phase}] ${answer.method} ${patternOf(answer.path)}: ${why}`;
      this.failureKinds[kind] = (this.failureKinds[kind] ?? 0) + 1;
    }
    return verdict;
  }

  private judge(answer: Answer): Verdict {
    const ms = answer.endedAt - answer.startedAt;
    if (ms > HANG_MS && answer.cls !== 'briefing') {
      this.hangs++;
      return 'failure';
    }
    if (answer.status >= 200 && answer.status < 500) return 'ok';
    if (answer.status === 503 && answer.retryAfter && answer.fromServer) return 'announced';
    // nginx answers 502/504 itself when its server is gone: not a failure while the harness keeps that server away,
    // either because it was the only one, or because the request was already on it when it was killed.
    if (answer.status >= 500 && !answer.fromServer && this.wasDown(answer)) return 'server-down';
    return 'failure';
  }

  private wasDown(answer: Answer): boolean {
    return this.downWindows.some((w) =>
      w.onlyServer
        ? answer.endedAt >= w.from && answer.startedAt <= (w.to ?? Infinity) + 1000
        : answer.startedAt <= w.from && answer.endedAt >= w.from,
    );
  }

  /** The first successful write of `cls` (any write class when omitted) that ended after `t`, in seconds after `t`. */
  firstWriteOkAfter(t: number, cls?: RequestClass): number | undefined {
    const hit = this.writeTimeline.find((w) => w.t >= t && w.ok && (!cls || w.cls === cls));
    return hit ? Math.round((hit.t - t) / 100) / 10 : undefined;
  }

  /** Status counts summed over every phase, per class. */
  totals(): Counts {
    const total: Counts = {};
    for (const byClass of Object.values(this.counts))
      for (const [cls, byStatus] of Object.entries(byClass))
        for (const [key, n] of Object.entries(byStatus)) {
          const row = (total[cls] ??= {});
          row[key] = (row[key] ?? 0) + n;
        }
    return total;
  }
}

/** How the summary names a status: `200`, `503+Retry-After`, `502 (nginx)`, `no answer`. */
export function statusKey(answer: Answer): string {
  if (answer.status === 0) return 'no answer';
  if (answer.status === 503 && answer.retryAfter) return '503+Retry-After';
  if (answer.status >= 500 && !answer.fromServer) return `${answer.status} (nginx)`;
  return String(answer.status);
}

/** A request's path with its ids and slugs folded, so the summary counts kinds of request: `/api/articles/{id}/like`. */
export function patternOf(path: string): string {
  return path
    .split('?')[0]!
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{id}')
    .replace(/^\/(article|section)\/[^/]+/, (_, kind: string) => `/${kind}/{${kind === 'article' ? 'slug' : 'name'}}`);
}
