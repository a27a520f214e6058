/**
 * `npm run rebuild` after a deploy (issue 36): it knows what the new code changes in the pages. In a
 * copy of the project (its sources edited as a deploy would), on real data and real builds: a change no
 * page shows (an API handler) swaps in the bundle and draws no page; a change to the footer draws every
 * page again in place and keeps the search index (no page's indexed text changed); a change to the
 * article's text draws every page and indexes search again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir } from '../helpers/server.ts';
import { copyProject, editFile } from '../helpers/project-copy.ts';
import { storeOptionsFor } from '../helpers/postgres.ts';
import { renderedCount, runRebuild } from '../helpers/rebuild.ts';
import { openStore } from '../../src/store/index.ts';
import { articleRecord } from '../unit/support.ts';

describe('npm run rebuild after a deploy', () => {
  const copy = copyProject('meridian-deploy-');
  const dataDir = makeDataDir('meridian-deploy-data-');
  const outDir = path.join(copy, '.out', 'site');
  const clientDir = path.join(outDir, 'client');

  const rebuild = () => runRebuild(outDir, dataDir, [], {}, copy);
  const edit = (file: string, change: (text: string) => string) => editFile(copy, file, change);
  /** Each search bundle folder's inode: a re-indexed bundle is a new folder renamed in. */
  const bundles = () =>
    new Map(
      fs
        .readdirSync(path.join(clientDir, 'pagefind'))
        .filter((name) => !name.endsWith('.json'))
        .map((name) => [name, fs.statSync(path.join(clientDir, 'pagefind', name)).ino]),
    );
  const page = (slug: string) => fs.readFileSync(path.join(clientDir, 'article', slug, 'index.html'), 'utf8');

  beforeAll(async () => {
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    for (let i = 0; i < 6; i++) {
      const at = new Date(Date.parse('2026-03-02T08:00:00.000Z') + i * 3_600_000).toISOString();
      await store.articles.insert(
        articleRecord({
          id: `deploy-${i}`,
          slug: `deploy-${i}`,
          title: `Deploy story ${i}`,
          createdAt: at,
          updatedAt: at,
          publishedAt: at,
        }),
      );
    }
    await store.close();
    const first = await rebuild();
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('full build: there is no build yet');
  }, 240_000);

  afterAll(() => {
    for (const dir of [copy, dataDir]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a change no page shows (an API handler) swaps in the new bundle and draws no page again', async () => {
    const search = bundles();
    const mtime = fs.statSync(path.join(clientDir, 'article', 'deploy-0', 'index.html')).mtimeMs;
    edit('src/pages/api/articles/count.ts', (text) => `${text}\n// Deployed: a change no page shows.\n`);
    const run = await rebuild();
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('new bundle: the code changed, but nothing the pages show');
    expect(run.output).toMatch(/\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\), 0 removed, 0 search bundle\(s\)/);
    expect(renderedCount(run.output)).toBeLessThanOrEqual(20);
    expect(fs.statSync(path.join(clientDir, 'article', 'deploy-0', 'index.html')).mtimeMs).toBe(mtime);
    expect(bundles()).toEqual(search);
    // The next run has nothing left to do for the code.
    const again = await rebuild();
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toContain('new bundle');
  }, 240_000);

  it('a change to the footer draws every page again in place and keeps the search index', async () => {
    const search = bundles();
    edit('src/components/SiteFooter.astro', (text) => text.replace('Your Gateway to Global Perspectives.', 'Your gateway, redeployed.'));
    const run = await rebuild();
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain(
      'every page rendered again with a new build: the templates, styles, static files or site settings changed',
    );
    expect(run.output).toContain('no page text changed: search index kept');
    for (let i = 0; i < 6; i++) expect(page(`deploy-${i}`)).toContain('Your gateway, redeployed.');
    // A fixed page (prerendered by the bundle's build) and a listing too.
    expect(fs.readFileSync(path.join(clientDir, 'about', 'index.html'), 'utf8')).toContain('Your gateway, redeployed.');
    expect(fs.readFileSync(path.join(clientDir, 'section', 'world', 'index.html'), 'utf8')).toContain('Your gateway, redeployed.');
    expect(bundles()).toEqual(search);
  }, 240_000);

  it("a change to the article's text draws every page again and indexes search again", async () => {
    const search = bundles();
    edit('src/views/ArticleView.astro', (text) =>
      text.replace('<header class="container narrow article-header">', '<header class="container narrow article-header"><p>Filed anew</p>'),
    );
    const run = await rebuild();
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/indexing for search the \d+ bundle\(s\) whose pages' text changed/);
    expect(page('deploy-3')).toContain('Filed anew');
    const after = bundles();
    expect([...after.keys()]).toEqual([...search.keys()]);
    for (const [name, ino] of after) expect(ino, name).not.toBe(search.get(name));
  }, 240_000);
});
