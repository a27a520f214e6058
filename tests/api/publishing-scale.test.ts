/**
 * The publishing pipeline at newsroom scale (10,000 articles): full rebuild time, time from an
 * editor's API call to the changed pages being served, per-job times, and 50 edits landing at once
 * while readers keep getting complete pages. Opt-in (PUBLISHING_SCALE=1): it takes a few minutes.
 * Figures are printed, not asserted.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, makeDataDir, makeOutDir, startServer, type TestServer } from '../helpers/server.ts';
import { SECTIONS } from '../../src/schemas/common.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { adminClient, createArticle, type TestClient, waitFor } from './support.ts';

/** This file's waits are long ones (whole bundles re-indexed, many pages rendered). */
const waitLong = <T>(what: string, check: () => Promise<T | undefined | false>) => waitFor(what, check, 120_000);

const COUNT = Number(process.env.PUBLISHING_SCALE_ARTICLES ?? 10_000);

/** Writes COUNT published articles straight into the lowdb files (inserting one by one would rewrite the file COUNT times). */
function generateStore(dataDir: string): void {
  const words = 'harbour council market election orbit season gallery verdict budget treaty striker vaccine startup festival column'.split(
    ' ',
  );
  const start = Date.now() - COUNT * 60_000;
  const articles: ArticleRecord[] = [];
  for (let i = 0; i < COUNT; i++) {
    const at = new Date(start + i * 60_000).toISOString();
    const w = (n: number) => words[(i * 7 + n * 3) % words.length];
    const paragraphs = Array.from(
      { length: 6 },
      (_, p) =>
        `<p>${w(p)} ${w(p + 1)} report ${i} paragraph ${p}: the ${w(p + 2)} story continues with detail and quotes from those involved.</p>`,
    );
    articles.push({
      id: randomUUID(),
      title: `${w(0)} ${w(1)} story number ${i}`,
      slug: `story-${i}`,
      dek: `What happened with the ${w(2)} and why it matters (${i}).`,
      bodyHtml: paragraphs.join(''),
      section: SECTIONS[i % SECTIONS.length]!,
      tags: [w(3)],
      authorName: 'Staff Writer',
      createdAt: at,
      updatedAt: at,
      publishedAt: at,
      readingTime: 2,
      isEditorsPick: i % 50 === 0,
      isBreaking: false,
      status: 'published',
    });
  }
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'articles.json'), JSON.stringify({ version: 1, articles }));
}

function run(script: string, env: Record<string, string>): Promise<{ code: number; output: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, script)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code: code ?? 1, output, ms: performance.now() - started }));
  });
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `median ${pick(0.5).toFixed(1)} ms, p95 ${pick(0.95).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (${sorted.length} jobs)`;
};

describe.skipIf(!process.env.PUBLISHING_SCALE)(`publishing with ${COUNT} articles`, () => {
  const outDir = makeOutDir('test-scale-');
  const dataDir = makeDataDir('meridian-scale-');
  let server: TestServer;
  let admin: TestClient;

  beforeAll(async () => {
    generateStore(dataDir);
    const rebuild = await run('scripts/rebuild.ts', { OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none' });
    expect(rebuild.code, rebuild.output.slice(-3000)).toBe(0);
    console.log(`[figure] full rebuild of ${COUNT} articles: ${(rebuild.ms / 1000).toFixed(1)} s`);
    console.log(
      rebuild.output
        .split('\n')
        .filter((l) => /files prerendered|search index {2}|total {2}/.test(l))
        .join('\n'),
    );
    server = await startServer({ dataDir, env: { OUT_DIR: outDir, SERVE_DIR: path.join(outDir, 'client'), TRUST_PROXY: 'true' } });
    admin = await adminClient(server);
  }, 900_000);

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  const jobTimes = () =>
    [...server.output().matchAll(/\[publish\] (\S+) (?:written|deleted|unchanged) in ([\d.]+) ms/g)].map((m) => Number(m[2]));

  it('an editor action is served within a fraction of a second', async () => {
    expect(server.output()).not.toContain('reconciling');
    const figures: string[] = [];
    for (let round = 1; round <= 5; round++) {
      const t0 = performance.now();
      const article = await createArticle(admin, { title: `Breaking scale story ${round}`, section: 'world', status: 'published' });
      const answered = performance.now() - t0;
      await waitLong('the article page', async () => (await fetch(new URL(`/article/${article.slug}`, server.url))).status === 200);
      const page = performance.now() - t0;
      await waitLong('the section page', async () =>
        (await (await fetch(new URL('/section/world', server.url))).text()).includes(`/article/${article.slug}`),
      );
      const section = performance.now() - t0;
      figures.push(
        `publish #${round}: API ${answered.toFixed(0)} ms, article served ${page.toFixed(0)} ms, section page ${section.toFixed(0)} ms`,
      );

      const t1 = performance.now();
      expect((await admin.put(`/api/articles/${article.id}`, { title: `Breaking scale story ${round}, updated` })).status).toBe(200);
      await waitLong('the updated page', async () =>
        (await (await fetch(new URL(`/article/${article.slug}`, server.url))).text()).includes(`story ${round}, updated`),
      );
      figures.push(`update  #${round}: article served ${(performance.now() - t1).toFixed(0)} ms`);

      const t2 = performance.now();
      expect((await admin.put(`/api/articles/${article.id}`, { status: 'archived' })).status).toBe(200);
      await waitLong('the 404', async () => (await fetch(new URL(`/article/${article.slug}`, server.url))).status === 404);
      figures.push(`unpublish #${round}: 404 served ${(performance.now() - t2).toFixed(0)} ms`);
    }
    console.log(`[figure] ${COUNT} articles, editor action -> page served:\n  ${figures.join('\n  ')}`);
    console.log(`[figure] regeneration job time: ${stats(jobTimes())}`);
  }, 300_000);

  it('50 edits at once: every page catches up and readers never get a partial page', async () => {
    const slugs = Array.from({ length: 50 }, (_, i) => `story-${COUNT - 1 - i * 3}`);
    const ids = await Promise.all(
      slugs.map(async (slug) => ((await (await admin.get(`/api/articles/by-slug/${slug}`)).json()) as { id: string }).id),
    );
    let done = false;
    let reads = 0;
    const partial: string[] = [];
    const readers = Array.from({ length: 4 }, async (_, r) => {
      while (!done) {
        const slug = slugs[(reads + r) % slugs.length]!;
        for (const p of [`/article/${slug}`, '/section/world', '/section/tech/page/3']) {
          const response = await fetch(new URL(p, server.url));
          const text = await response.text();
          reads++;
          if (response.status !== 200 || !text.trimEnd().endsWith('</html>')) partial.push(`${p} ${response.status} ${text.length}`);
        }
      }
    });
    const t0 = performance.now();
    const results = await Promise.all(ids.map((id, i) => admin.put(`/api/articles/${id}`, { title: `Concurrent edit ${i}` })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const answered = performance.now() - t0;
    await waitLong('all 50 pages', async () => {
      for (const [i, slug] of slugs.entries()) {
        if (!(await (await fetch(new URL(`/article/${slug}`, server.url))).text()).includes(`Concurrent edit ${i}`)) return false;
      }
      return true;
    });
    const all = performance.now() - t0;
    done = true;
    await Promise.all(readers);
    console.log(
      `[figure] 50 concurrent edits: API answered all in ${answered.toFixed(0)} ms; all 50 article pages served in ${all.toFixed(0)} ms; ${reads} reader requests meanwhile, ${partial.length} partial or failed`,
    );
    expect(partial).toEqual([]);
    await waitLong('a search index rebuild', async () => /search index rebuilt: \d+ pages in \d+ ms/.test(server.output()));
    console.log(
      `[figure] ${server
        .output()
        .match(/search index rebuilt: \d+ pages in \d+ ms/g)!
        .at(-1)}`,
    );
  }, 300_000);
});
