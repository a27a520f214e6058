/**
 * The soak run's realistic mix, all through nginx: readers (a page, its vote counters, a page view),
 * votes from new visitors, comments, editors saving their articles, a desk publishing new ones. Every
 * answer goes to the ledger; every write is kept with whether it was acknowledged.
 */
import { randomBytes } from 'node:crypto';
import type { Article } from '../../src/schemas/article.ts';
import { NAV_SECTIONS } from '../../src/schemas/sections.ts';
import type { Ledger, RequestClass } from './ledger.ts';

const BODY = `<p>${'The council met again on Thursday to weigh the proposal and hear from residents who had waited for hours. '.repeat(12)}</p>`;

export type Reply = { status: number; text: string; json: () => unknown; headers: Headers };

/** A session: its cookies, sent with each request and updated from each answer. */
export type Session = { cookies: Map<string, string> };

export function createSession(): Session {
  return { cookies: new Map() };
}

/** The bench's 30 s deadline: well past the 10 s bound, so a hang is measured rather than cut short at it. */
const DEADLINE_MS = 30_000;

/**
 * One request through the front, counted in the ledger under `cls`; answers undefined when no HTTP
 * answer came. `Origin` is the front's, as the site's own pages send it.
 */
export async function send(
  ledger: Ledger,
  cls: RequestClass,
  origin: string,
  method: string,
  path: string,
  options: { json?: unknown; session?: Session; cookie?: string; headers?: Record<string, string>; deadlineMs?: number } = {},
): Promise<Reply | undefined> {
  const headers: Record<string, string> = { Origin: origin, ...options.headers };
  const cookies = [...(options.session?.cookies ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`);
  if (options.cookie) cookies.push(options.cookie);
  if (cookies.length) headers.Cookie = cookies.join('; ');
  if (options.json !== undefined) headers['Content-Type'] = 'application/json';
  const startedAt = performance.now();
  try {
    const response = await fetch(new URL(path, origin), {
      method,
      headers,
      body: options.json === undefined ? null : JSON.stringify(options.json),
      redirect: 'manual',
      signal: AbortSignal.timeout(options.deadlineMs ?? DEADLINE_MS),
    });
    const text = await response.text();
    const endedAt = performance.now();
    if (options.session)
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const index = pair!.indexOf('=');
        const value = pair!.slice(index + 1);
        if (value === '' || /max-age=0/i.test(cookie)) options.session.cookies.delete(pair!.slice(0, index));
        else options.session.cookies.set(pair!.slice(0, index), value);
      }
    ledger.record({
      cls,
      method,
      path,
      status: response.status,
      startedAt,
      endedAt,
      retryAfter: response.headers.has('retry-after'),
      fromServer: response.headers.has('x-request-id'),
      ...(response.status >= 500 ? { body: text.slice(0, 300) } : {}),
    });
    return { status: response.status, text, json: () => JSON.parse(text) as unknown, headers: response.headers };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    ledger.record({
      cls,
      method,
      path,
      status: 0,
      startedAt,
      endedAt: performance.now(),
      retryAfter: false,
      fromServer: false,
      error: (error as Error).name === 'TimeoutError' ? `no answer within ${DEADLINE_MS / 1000} s` : (cause ?? (error as Error).message),
    });
    return undefined;
  }
}

/** A visitor id in the form the server accepts (26 base32 characters), as a browser's cookie holds it. */
export function createVisitorId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let id = '';
  for (const byte of randomBytes(26)) id += alphabet[byte & 31];
  return id;
}

export type Story = { id: string; slug: string; title: string; section: string };

export type MixOptions = {
  origin: string;
  /** Reader visits a second (each: a page, its vote counters, a page view). */
  readers: number;
  votesPerS: number;
  commentsPerS: number;
  editors: number;
  /** Seconds between one editor's saves. */
  saveEveryS: number;
  /** Seconds between new articles from the desk. */
  publishEveryS: number;
  admin: { username: string; password: string };
  /** Called with each acknowledged new article (the run times it to live on every server). */
  onPublished: (story: Story, created: Ledger['created'][number]) => void;
};

export type Mix = {
  stories: Story[];
  /** Publishes one article now (the faults ask for one at a moment of their choosing). */
  publishNow: () => Promise<void>;
  /** Stops every stream and waits for the requests in flight. */
  stop: () => Promise<void>;
};

/** Signs `session` in; answers whether it worked (it is retried at the next write when not). */
export async function signIn(ledger: Ledger, origin: string, session: Session, admin: MixOptions['admin']): Promise<boolean> {
  const reply = await send(ledger, 'login', origin, 'POST', '/api/auth/login', { json: admin, session });
  return reply?.status === 200;
}

/**
 * Starts the streams. A stream fires on its own schedule whatever the answers take, but keeps at most
 * `MAX_IN_FLIGHT` requests waiting: a server that hangs is not buried under an ever-growing pile.
 */
export function startMix(ledger: Ledger, stories: Story[], options: MixOptions): Mix {
  const MAX_IN_FLIGHT = 16;
  const timers: NodeJS.Timeout[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let stopped = false;
  const pick = () => {
    // Readers favour the newest stories, as a front page does.
    const recent = Math.random() < 0.6 ? stories.slice(-10) : stories;
    return recent[Math.floor(Math.random() * recent.length)]!;
  };
  const every = (perS: number, work: () => Promise<unknown>) => {
    if (perS <= 0) return;
    let running = 0;
    const timer = setInterval(() => {
      if (stopped || running >= MAX_IN_FLIGHT) return;
      running++;
      const task = work()
        .catch((error: unknown) => console.error(`[soak] stream error: ${(error as Error).stack ?? String(error)}`))
        .finally(() => {
          running--;
          inFlight.delete(task);
        });
      inFlight.add(task);
    }, 1000 / perS);
    timers.push(timer);
  };
  const { origin } = options;

  every(options.readers, async () => {
    const roll = Math.random();
    const story = pick();
    const page = roll < 0.7 ? `/article/${story.slug}` : roll < 0.9 ? `/section/${story.section}` : '/';
    await send(ledger, 'page', origin, 'GET', page);
    if (page.startsWith('/article/')) await send(ledger, 'api-read', origin, 'GET', `/api/articles/${story.id}/vote`);
    await send(ledger, 'pageview', origin, 'POST', '/api/analytics/pageview', { json: { path: page } });
  });

  every(options.votesPerS, async () => {
    const story = pick();
    const kind = Math.random() < 0.75 ? 'like' : 'dislike';
    const visitor = createVisitorId();
    const reply = await send(ledger, 'vote', origin, 'POST', `/api/articles/${story.id}/${kind}`, { cookie: `vid=${visitor}` });
    ledger.votes.push({ articleId: story.id, visitor, kind, acked: reply?.status === 200 });
  });

  let commentNo = 0;
  every(options.commentsPerS, async () => {
    const story = pick();
    const content = `Soak comment ${++commentNo} on ${story.slug}: the vote should wait for the survey.`;
    const reply = await send(ledger, 'comment', origin, 'POST', `/api/articles/${story.id}/comments`, {
      json: { authorName: `Reader ${commentNo}`, authorEmail: `reader${commentNo}@example.com`, content },
    });
    const acked = reply?.status === 201;
    ledger.comments.push({ articleId: story.id, content, acked, ...(acked ? { id: (reply.json() as { id: string }).id } : {}) });
  });

  // Editors: each saves its own stories in turn, with the version it last saw, as the editor does.
  const desk = createSession();
  let saveNo = 0;
  for (let e = 0; e < options.editors; e++) {
    const session = createSession();
    const versions = new Map<string, number>();
    let turn = 0;
    every(1 / options.saveEveryS, async () => {
      if (!session.cookies.size && !(await signIn(ledger, origin, session, options.admin))) return;
      const mine = stories.filter((_, i) => i % options.editors === e);
      const story = mine[turn++ % mine.length]!;
      await saveStory(ledger, origin, session, story, versions, `soak-save-${++saveNo}`);
    });
  }

  const publishNow = async () => {
    if (!desk.cookies.size && !(await signIn(ledger, origin, desk, options.admin))) return;
    const section = NAV_SECTIONS[ledger.created.length % NAV_SECTIONS.length]!;
    const title = `Soak story ${ledger.created.length + 1} ${Date.now().toString(36)}`;
    const created: Ledger['created'][number] = { title, acked: false, at: performance.now(), phase: ledger.phase };
    ledger.created.push(created);
    const reply = await send(ledger, 'publish', origin, 'POST', '/api/articles', {
      session: desk,
      json: { title, bodyHtml: BODY, section, status: 'published', tags: ['soak'], isEditorsPick: ledger.created.length % 3 === 0 },
    });
    if (reply?.status === 401) {
      ledger.sessionsLost++;
      desk.cookies.clear();
    }
    if (reply?.status !== 201) return;
    const article = reply.json() as Article;
    Object.assign(created, { id: article.id, slug: article.slug, acked: true });
    const story = { id: article.id, slug: article.slug, title, section };
    stories.push(story);
    options.onPublished(story, created);
  };
  every(1 / options.publishEveryS, publishNow);

  return {
    stories,
    publishNow,
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * One save of `story`'s body with a marker the end of the run looks for. A 409 after a failed save
 * means the failed one changed the article anyway: the article is read back to tell.
 */
async function saveStory(
  ledger: Ledger,
  origin: string,
  session: Session,
  story: Story,
  versions: Map<string, number>,
  marker: string,
): Promise<void> {
  const attempts = ledger.saves.get(story.id) ?? [];
  ledger.saves.set(story.id, attempts);
  const version = versions.get(story.id);
  const reply = await send(ledger, 'save', origin, 'PUT', `/api/articles/${story.id}`, {
    session,
    json: { bodyHtml: `${BODY}<p>Edited: [${marker}].</p>`, ...(version ? { version } : {}) },
  });
  const status = reply?.status ?? 0;
  attempts.push({ marker, acked: status === 200, status, phase: ledger.phase });
  if (status === 200) versions.set(story.id, (reply!.json() as { version: number }).version);
  if (status === 401) {
    ledger.sessionsLost++;
    session.cookies.clear();
  }
  if (status !== 409) return;
  ledger.conflicts++;
  const current = await send(ledger, 'api-read', origin, 'GET', `/api/articles/${story.id}`, { session });
  if (current?.status !== 200) {
    versions.delete(story.id);
    return;
  }
  const article = current.json() as { bodyHtml?: string; version: number };
  versions.set(story.id, article.version);
  const failed = attempts.at(-2);
  if (failed && !failed.acked && article.bodyHtml?.includes(`[${failed.marker}]`))
    ledger.refusedButApplied.push({ articleId: story.id, marker: failed.marker, status: failed.status, phase: failed.phase });
}
