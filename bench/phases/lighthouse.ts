/** Lighthouse's mobile preset in Debian's Chromium: the median of several runs per page, with the failing audits kept as notes. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM } from '../browser.ts';
import { runNode } from '../children.ts';
import { waitUntil, type BenchServer } from '../processes.ts';
import type { ApiClient } from '../../tests/helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import { notes, record } from '../report.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

type Scores = {
  performance: number;
  accessibility: number;
  bestPractices: number;
  seo: number;
  cls: number;
  lcpMs: number;
  failing: string[];
};

/** Lighthouse's mobile preset (its default) in Debian's Chromium, as its own process. */
async function runLighthouse(url: string, workDir: string): Promise<Scores> {
  const out = path.join(workDir, `lighthouse-${Date.now()}.json`);
  const result = await runNode(
    path.join(ROOT, 'node_modules/lighthouse/cli/index.js'),
    [
      url,
      '--quiet',
      '--output=json',
      `--output-path=${out}`,
      '--only-categories=performance,accessibility,best-practices,seo',
      '--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage',
    ],
    { CHROME_PATH: CHROMIUM },
    240_000,
  );
  if (result.code !== 0 || !fs.existsSync(out)) throw new Error(`lighthouse failed: ${result.output.slice(-2000)}`);
  const report = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    categories: Record<string, { score: number | null; auditRefs: Array<{ id: string; weight: number }> }>;
    audits: Record<
      string,
      { title: string; score: number | null; displayValue?: string; details?: { items?: Array<Record<string, unknown>> } }
    >;
  };
  const score = (name: string) => Math.round((report.categories[name]?.score ?? 0) * 100);
  const failing: string[] = [];
  for (const [name, category] of Object.entries(report.categories)) {
    for (const ref of category.auditRefs) {
      const audit = report.audits[ref.id];
      if (ref.weight > 0 && audit && audit.score !== null && audit.score < (name === 'performance' ? 0.9 : 1)) {
        // The first few items say which element or message failed (e.g. the console error's text).
        const items = (audit.details?.items ?? [])
          .slice(0, 3)
          .map((item) =>
            String(item.description ?? item.url ?? (item.node as { snippet?: string } | undefined)?.snippet ?? '').slice(0, 160),
          )
          .filter(Boolean);
        failing.push(
          `${name}: ${audit.title}${audit.displayValue ? ` (${audit.displayValue})` : ''}${items.length ? `: ${items.join(' | ')}` : ''}`,
        );
      }
    }
  }
  const numeric = (id: string) => (report.audits[id] as { numericValue?: number } | undefined)?.numericValue ?? NaN;
  return {
    performance: score('performance'),
    accessibility: score('accessibility'),
    bestPractices: score('best-practices'),
    seo: score('seo'),
    cls: numeric('cumulative-layout-shift'),
    lcpMs: numeric('largest-contentful-paint'),
    failing,
  };
}

/**
 * Lighthouse's trace recording sometimes fails on a loaded machine ("Something went wrong with recording"): a run is retried twice before
 * the page counts as failed.
 */
async function runLighthouseRetrying(url: string, workDir: string): Promise<Scores> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runLighthouse(url, workDir);
    } catch (error) {
      if (attempt >= 3) throw error;
      notes.push(`lighthouse ${url}: attempt ${attempt} failed (${(error as Error).message.split('\n')[0]!.slice(0, 80)}), retried`);
    }
  }
}

/**
 * A live article to measure (issue 35): another published world article made live, with key points
 * and three updates (one breaking, one with an image), once its page and live.json carry them.
 */
export async function prepareLiveArticle(server: BenchServer, admin: ApiClient, except: string): Promise<string> {
  const listed = (await (await admin.get('/api/articles?section=world&pageSize=5&status=published')).json()) as Article[];
  const article = listed.find((a) => a.slug !== except);
  if (!article) throw new Error('no second published article to make live');
  await admin.put(`/api/articles/${article.id}/live`, { status: 'live', keyPoints: ['The first key point', 'A second key point'] });
  const updates = [
    {
      bodyHtml: '<p>The first update, with the scene as it was.</p>',
      ...(article.heroImage ? { image: article.heroImage, imageAlt: 'The scene' } : {}),
    },
    { bodyHtml: '<p>A breaking update.</p>', isBreaking: true },
    { bodyHtml: '<p>The newest update, two short sentences. It is the last one.</p>' },
  ];
  for (const update of updates) await admin.post(`/api/articles/${article.id}/updates`, update);
  const ready = await waitUntil(30_000, async () => {
    const response = await fetch(`${server.url}/article/${article.slug}/live.json`);
    return response.ok && ((await response.json()) as { total: number }).total === updates.length;
  });
  if (!ready) throw new Error('the live article was not regenerated within 30 s');
  return article.slug;
}

/**
 * The Lighthouse figures of the article, section, tag (issue 35: the generated `climate`) and search pages
 * and of a live article (when given), `runCount` runs each (the median by performance is recorded).
 */
export async function measureLighthouse(
  server: BenchServer,
  slug: string,
  runCount: number,
  workDir: string,
  liveSlug?: string,
): Promise<void> {
  const pages: Array<readonly [string, string]> = [
    ['article page', `/article/${slug}`],
    ['section page', '/section/world'],
    ['tag page', '/tag/climate'],
    ['search page', '/search'],
    ...(liveSlug ? [['live article', `/article/${liveSlug}`] as const] : []),
  ];
  for (const [name, url] of pages) {
    try {
      // Lighthouse's own advice: the median of several runs (by performance score), a single run is noisy.
      const runs: Scores[] = [];
      for (let run = 0; run < runCount; run++) runs.push(await runLighthouseRetrying(`${server.url}${url}`, workDir));
      const scores = [...runs].sort((a, b) => a.performance - b.performance)[Math.floor(runs.length / 2)]!;
      if (runs.length > 1) record('lighthouse', `${name}: performance of each run`, runs.map((r) => r.performance).join(', '), '/100');
      record('lighthouse', `${name}: performance`, scores.performance, '/100', '>= 95', scores.performance >= 95);
      record('lighthouse', `${name}: accessibility`, scores.accessibility, '/100', '100', scores.accessibility === 100);
      record('lighthouse', `${name}: best practices`, scores.bestPractices, '/100', '100', scores.bestPractices === 100);
      record(
        'lighthouse',
        `${name}: SEO`,
        scores.seo,
        '/100',
        name === 'search page' ? '(noindex on purpose)' : '100',
        name === 'search page' ? undefined : scores.seo === 100,
      );
      record('lighthouse', `${name}: CLS`, Number(scores.cls.toFixed(3)), '', '<= 0.1', scores.cls <= 0.1);
      record('lighthouse', `${name}: LCP (simulated mobile)`, Math.round(scores.lcpMs), 'ms');
      for (const failing of scores.failing) notes.push(`lighthouse ${name}: ${failing}`);
    } catch (error) {
      record('lighthouse', `${name}`, 'failed', '', (error as Error).message.split('\n')[0]!.slice(0, 80), false);
    }
  }
}
