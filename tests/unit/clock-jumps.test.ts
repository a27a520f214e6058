/**
 * Clock jumps, on a real store (lowdb, or PostgreSQL with TEST_STORE=pg) with the server's clock
 * (src/server/clock.ts) moved under running schedulers: a scheduled article is published once, not
 * twice and not never, when the clock jumps forward or back across its time; the briefing goes out
 * once a day (counted per address on a real SMTP server) across jumps over BRIEFING_TIME and midnight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setClock } from '../../src/server/clock.ts';
import { startScheduler } from '../../src/server/publishing/scheduler.ts';
import { startBriefingScheduler } from '../../src/server/briefing/service.ts';
import { localTime } from '../../src/server/briefing/clock.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { articleRecord, closeQuietly, makeRuntime } from './support.ts';

type TestRuntime = Awaited<ReturnType<typeof makeRuntime>>;

let runtime: TestRuntime | undefined;
let smtp: TestSmtp | undefined;

afterEach(async () => {
  setClock(undefined);
  for (const service of runtime?.services.values() ?? []) await service.stop();
  await closeQuietly(runtime?.store);
  await smtp?.stop();
  runtime = undefined;
  smtp = undefined;
});

/** The server's clock runs on from wherever it was last set, as a real one does after a jump. */
function movableClock(): { jumpTo(iso: string): void } {
  let offset = 0;
  setClock(() => Date.now() + offset);
  return {
    jumpTo(iso) {
      offset = Date.parse(iso) - Date.now();
    },
  };
}

function scheduledArticle(scheduledFor: string, title: string): ArticleRecord {
  const { publishedAt: _none, ...rest } = articleRecord({ title, status: 'scheduled', scheduledFor });
  return rest;
}

describe('scheduled publishing across clock jumps', () => {
  it('publishes once when the clock jumps forward over the time, never again when it jumps back, and on time after a jump back before it', async () => {
    runtime = await makeRuntime();
    const rt = runtime;
    const clock = movableClock();
    clock.jumpTo('2031-03-04T11:00:00Z');
    const early = scheduledArticle('2031-03-04T12:00:00Z', 'Due at noon');
    const late = scheduledArticle('2031-03-04T14:00:00Z', 'Due at two');
    await rt.store.articles.insert(early);
    await rt.store.articles.insert(late);
    const statusOf = async (article: ArticleRecord) => (await rt.store.articles.get(article.id))!.status;
    /** How many times the article went from scheduled to published (the hook regenerates its pages each time). */
    const publications = (article: ArticleRecord) =>
      rt.changes.flat().filter((c) => c.after?.id === article.id && c.before?.status === 'scheduled' && c.after.status === 'published')
        .length;
    // Each tick begins by reading what is due: a tick that published nothing shows as one more read.
    let looks = 0;
    const listDue = rt.store.articles.listDue.bind(rt.store.articles);
    rt.store.articles.listDue = (...args) => {
      looks++;
      return listDue(...args);
    };
    /** Resolves once a whole tick ran after the call (the one after it has begun): it saw the clock as it is now. */
    const aWholeTick = async () => {
      const from = looks;
      await expect.poll(() => looks, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(from + 2);
    };
    // The real loop, with its longest wait (30 s in the server) shortened to watch it.
    const scheduler = startScheduler(rt, { enqueue: async () => {}, maxIntervalMs: 300 });
    try {
      await aWholeTick();
      expect(await statusOf(early)).toBe('scheduled');

      // Forward over noon: published at the next tick.
      clock.jumpTo('2031-03-04T13:30:00Z');
      // (Waiting for the article hook, told once the store has it.)
      await expect.poll(() => publications(early), { timeout: 5000, interval: 50 }).toBe(1);
      expect(await statusOf(early)).toBe('published');
      const published = (await rt.store.articles.get(early.id))!;
      expect(await statusOf(late)).toBe('scheduled');

      // Back before noon, after it was published: nothing to publish again (a control article due at
      // the new time shows the scheduler did look at the moved clock).
      clock.jumpTo('2031-03-04T11:30:00Z');
      const control = scheduledArticle('2031-03-04T11:30:00Z', 'Due at half past eleven');
      await rt.store.articles.insert(control);
      await expect.poll(() => publications(control), { timeout: 5000, interval: 50 }).toBe(1);
      expect(publications(early)).toBe(1);
      expect((await rt.store.articles.get(early.id))!.version).toBe(published.version);

      // Two seconds before the late one's time, then back two hours: not published early (while a
      // control due two seconds after the new time is)...
      clock.jumpTo('2031-03-04T13:59:58Z');
      clock.jumpTo('2031-03-04T11:59:58Z');
      const noon = scheduledArticle('2031-03-04T12:00:00Z', 'Due at noon again');
      await rt.store.articles.insert(noon);
      await expect.poll(() => publications(noon), { timeout: 10_000, interval: 50 }).toBe(1);
      expect(await statusOf(late)).toBe('scheduled');
      // ...and published once the clock reaches its time again.
      clock.jumpTo('2031-03-04T13:59:59Z');
      await expect.poll(() => publications(late), { timeout: 5000, interval: 50 }).toBe(1);
      expect(await statusOf(late)).toBe('published');
      await aWholeTick();
      expect(publications(late)).toBe(1);
      expect(publications(early)).toBe(1);
    } finally {
      await scheduler.stop();
    }
  }, 30_000);
});

describe('the briefing across clock jumps', () => {
  it('goes out once a day: forward and back over BRIEFING_TIME, and back over midnight', async () => {
    smtp = await startSmtp();
    runtime = await makeRuntime();
    const rt = runtime;
    rt.config = { ...rt.config, SMTP_URL: smtp.url, BRIEFING_TIME: '07:00', BRIEFING_TZ: 'UTC' };
    const clock = movableClock();
    // A Tuesday and the Wednesday after it.
    expect(localTime(new Date('2031-03-04T12:00:00Z'), 'UTC').weekday).toBe(2);
    const emails = ['early@example.com', 'riser@example.com'];
    for (const [i, email] of emails.entries())
      await rt.store.subscribers.upsert({
        id: `jump-${i}`,
        email,
        token: `jumptoken${String(i).padStart(12, '0')}`,
        createdAt: '2031-03-01T00:00:00.000Z',
        confirmedAt: '2031-03-01T00:00:00.000Z',
      });
    await rt.store.articles.insert(articleRecord({ title: 'Tuesday news', publishedAt: '2031-03-04T06:00:00.000Z', isEditorsPick: true }));
    const received = () => emails.map((email) => smtp!.to(email).length);

    clock.jumpTo('2031-03-04T06:50:00Z');
    const scheduler = await startBriefingScheduler(rt);
    try {
      await scheduler.tick();
      expect(received()).toEqual([0, 0]);

      // Forward over 07:00: today's briefing, once.
      clock.jumpTo('2031-03-04T09:00:00Z');
      await scheduler.tick();
      expect(received()).toEqual([1, 1]);

      // Back before 07:00, then past it again: today's went out already.
      clock.jumpTo('2031-03-04T06:30:00Z');
      await scheduler.tick();
      clock.jumpTo('2031-03-04T07:05:00Z');
      await scheduler.tick();
      expect(received()).toEqual([1, 1]);

      // The next day, over 07:00: one more.
      clock.jumpTo('2031-03-05T06:55:00Z');
      await scheduler.tick();
      await rt.store.articles.insert(
        articleRecord({ title: 'Wednesday news', publishedAt: '2031-03-05T06:00:00.000Z', isEditorsPick: true }),
      );
      clock.jumpTo('2031-03-05T07:30:00Z');
      await scheduler.tick();
      expect(received()).toEqual([2, 2]);
      expect(smtp.to(emails[0]!).at(-1)!.parsed.subject).toContain('Wednesday news');

      // Back over midnight into Tuesday evening, then to Wednesday again: both days have theirs.
      clock.jumpTo('2031-03-04T23:00:00Z');
      await scheduler.tick();
      clock.jumpTo('2031-03-05T07:10:00Z');
      await scheduler.tick();
      expect(received()).toEqual([2, 2]);
      expect(await rt.store.briefings.runsFor('2031-03-04')).toHaveLength(1);
      expect(await rt.store.briefings.runsFor('2031-03-05')).toHaveLength(1);
    } finally {
      scheduler.stop();
    }
  }, 30_000);
});
