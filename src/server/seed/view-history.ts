/**
 * 90 days of plausible page views for the demo (issue 33), so the dashboard's charts are alive on first
 * start: a weekday rhythm, a site that grows, stories that fade after publication and a few that spike,
 * referrers and devices. Deterministic for a given `now`.
 */
import { createHash } from 'node:crypto';
import type { ArticleRecord } from '../../schemas/article.ts';
import { FRONT_PAGE_KEY, type ViewCount, type ViewGrain, type ViewDimension } from '../../schemas/analytics.ts';
import { NAV_SECTIONS } from '../../schemas/common.ts';
import type { AnalyticsRepository } from '../../store/types.ts';
import { dayStartMs, isoMinute, newsroomDay } from '../calendar.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HISTORY_DAYS = 90;
const HOURLY_DAYS = 14;
/** Readers by local hour: quiet at night, a morning peak and an evening one. */
const DIURNAL = [1, 0.6, 0.4, 0.3, 0.3, 0.5, 1.2, 2.4, 3, 2.6, 2.2, 2, 2.3, 2, 1.8, 1.7, 1.8, 2, 2.4, 2.6, 2.4, 2, 1.6, 1.2];
const DIURNAL_SUM = DIURNAL.reduce((a, b) => a + b, 0);
const REFERRERS: [kind: string, host: string, share: number][] = [
  ['direct', '(direct)', 0.34],
  ['search', 'google.com', 0.24],
  ['search', 'duckduckgo.com', 0.05],
  ['social', 't.co', 0.07],
  ['social', 'facebook.com', 0.06],
  ['social', 'reddit.com', 0.03],
  ['newsletter', 'newsletter', 0.13],
  ['other', 'news.example.org', 0.08],
];
const DEVICES: [device: string, share: number][] = [
  ['mobile', 0.58],
  ['desktop', 0.34],
  ['tablet', 0.08],
];

function fraction(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32LE(0) / 2 ** 32;
}

/** Writes the history; answers how many views it holds. */
export async function seedViewHistory(
  analytics: AnalyticsRepository,
  articles: readonly ArticleRecord[],
  timeZone: string,
  now: number,
): Promise<number> {
  const counts = new Map<string, ViewCount>();
  const add = (grain: ViewGrain, start: string, dim: ViewDimension, key: string, views: number) => {
    if (views <= 0) return;
    const id = `${grain}\u0000${start}\u0000${dim}\u0000${key}`;
    const count = counts.get(id);
    if (count) count.views += views;
    else counts.set(id, { grain, start, dim, key, views });
  };
  const published = articles.filter((a) => a.status === 'published' && a.publishedAt);
  const today = newsroomDay(now, timeZone);
  let total = 0;
  for (let back = HISTORY_DAYS - 1; back >= 0; back--) {
    const day = newsroomDay(now - back * DAY, timeZone);
    const start = dayStartMs(day, timeZone);
    const weekday = new Date(`${day}T12:00:00Z`).getUTCDay();
    const rhythm = weekday === 0 || weekday === 6 ? 0.65 : 1;
    const growth = 0.55 + (0.45 * (HISTORY_DAYS - 1 - back)) / (HISTORY_DAYS - 1);
    // Today so far only: the hours that have passed.
    const hours = day === today ? Math.max(1, Math.ceil((now - start) / HOUR)) : 24;
    const share = DIURNAL.slice(0, hours).reduce((a, b) => a + b, 0) / DIURNAL_SUM;
    const pages: { section: string; articleId?: string; views: number }[] = [];
    pages.push({ section: FRONT_PAGE_KEY, views: Math.round(420 * rhythm * growth * (0.85 + 0.3 * fraction(`front:${day}`)) * share) });
    for (const section of NAV_SECTIONS)
      pages.push({ section, views: Math.round(35 * rhythm * growth * (0.7 + 0.6 * fraction(`${section}:${day}`)) * share) });
    for (const article of published) {
      const age = Math.floor((start - Date.parse(article.publishedAt!)) / DAY);
      if (start + DAY <= Date.parse(article.publishedAt!)) continue;
      const reach = 60 + 240 * fraction(`reach:${article.slug}`);
      const spike = fraction(`spike:${article.slug}`) > 0.9 && age <= 1 ? 6 : 1;
      const fade = 1 / (1 + Math.max(0, age) * 0.6);
      const views = Math.round(reach * spike * fade * rhythm * (0.75 + 0.5 * fraction(`${article.slug}:${day}`)) * share);
      pages.push({ section: article.section, articleId: article.id, views });
    }
    for (const page of pages) {
      if (page.views <= 0) continue;
      total += page.views;
      add('day', day, 'section', page.section, page.views);
      if (page.articleId) add('day', day, 'article', page.articleId, page.views);
      let left = page.views;
      for (const [i, [kind, host, part]] of REFERRERS.entries()) {
        const views = i === REFERRERS.length - 1 ? left : Math.min(left, Math.round(page.views * part));
        left -= views;
        add('day', day, 'referrer', `${page.section}\t${kind}\t${host}`, views);
      }
      left = page.views;
      for (const [i, [device, part]] of DEVICES.entries()) {
        const views = i === DEVICES.length - 1 ? left : Math.min(left, Math.round(page.views * part));
        left -= views;
        add('day', day, 'device', `${page.section}\t${device}`, views);
      }
      if (back >= HOURLY_DAYS) continue;
      // The day's views over its hours, the remainder in the last one, so hours add up to the day.
      left = page.views;
      const weights = DIURNAL.slice(0, hours);
      const weightSum = weights.reduce((a, b) => a + b, 0);
      for (let h = 0; h < hours; h++) {
        const views = h === hours - 1 ? left : Math.min(left, Math.round((page.views * weights[h]!) / weightSum));
        left -= views;
        const hourStart = isoMinute(start + h * HOUR);
        add('hour', hourStart, 'section', page.section, views);
        if (page.articleId) add('hour', hourStart, 'article', page.articleId, views);
        // Reading now: the last half hour's share of this hour, one bucket a minute.
        if (day === today && h === hours - 1 && views > 0) {
          const minutes = Math.min(30, Math.floor((now - (start + h * HOUR)) / 60_000) + 1);
          for (let m = 0; m < minutes; m++) {
            const minute = Math.floor(now / 60_000) * 60_000 - m * 60_000;
            add('minute', isoMinute(minute), 'section', page.section, fraction(`${page.section}:${minute}`) < views / 60 ? 1 : 0);
          }
        }
      }
    }
  }
  const all = [...counts.values()];
  for (let i = 0; i < all.length; i += 5000) await analytics.addViews(all.slice(i, i + 5000));
  return total;
}
