/**
 * The worker's two lanes with a real store, a real served folder and the real Pagefind indexer: a
 * page job queued while a search build runs is rendered meanwhile, not after the build, and stop()
 * waits for the build. The build is held deterministically: the one article it indexes has a named
 * pipe (FIFO) for its page, so Pagefind blocks reading it until the test writes the page into it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { articleWritesPending, trackArticleWrite, type Runtime } from '../../src/server/runtime.ts';
import { manifestFileFor, readRenderManifest, writeRenderManifest } from '../../src/server/publishing/manifest.ts';
import { readPeriodsFile } from '../../src/server/publishing/search-periods.ts';
import { startRegenerationWorker, type RegenerationWorker, type WorkerOptions } from '../../src/server/publishing/worker.ts';
import { articleRecord, closeQuietly, collectingLog, makeRuntime, makeTempDir } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls `check` until it holds or `timeoutMs` passes (a bound for a failing run, not a figure). */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(10);
  }
  return false;
}

/**
 * A queue time just before now. A job the worker starts in the very millisecond it was queued runs
 * twice, by design: the worker cannot tell whether that write came before its start (runJob). With
 * settleMs 0 a test can hit that millisecond, which made "rendered once" fail now and then.
 */
const queuedJustNow = () => new Date(Date.now() - 5).toISOString();

const PAGE = (title: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1></main></body></html>`;

/** A render manifest saying the pages in `clientDir` match the store as it is now (a build just ran). */
async function writeCurrentManifest(runtime: Runtime, clientDir: string): Promise<void> {
  writeRenderManifest(manifestFileFor(clientDir), {
    storeId: runtime.store.id,
    version: await runtime.store.articles.version(),
    renderedAt: new Date().toISOString(),
    by: 'build',
    siteUrl: runtime.config.SITE_URL,
  });
}

/** A worker's options as the server wires them (a write counts until its hooks ran), logging and rendering into the arrays. */
function workerOptions(runtime: Runtime, clientDir: string, logged: string[], rendered: string[] = []): WorkerOptions {
  return {
    clientDir,
    writesPending: () => articleWritesPending(runtime),
    settleMs: 0,
    searchDebounceMs: 0,
    log: collectingLog(logged),
    render: async (publicPath) => {
      rendered.push(publicPath);
      return { kind: 'page', body: new TextEncoder().encode(PAGE(publicPath)) };
    },
  };
}

/**
 * A worker over a fresh store holding one published article from a closed month, whose page in the
 * served folder is a FIFO; the pages on disk are current (a matching manifest), so the start-up
 * compaction is the only job and blocks on that page. Answers the worker and `hold()`, which resolves
 * once Pagefind has the FIFO open, with `release()` to hand it the page.
 */
async function workerWithHeldBuild(): Promise<{
  runtime: Runtime;
  worker: RegenerationWorker;
  clientDir: string;
  rendered: string[];
  logged: string[];
  hold: () => Promise<{ release: () => void }>;
}> {
  const runtime = await makeRuntime();
  cleanups.push(() => closeQuietly(runtime.store));
  await runtime.store.articles.insert(articleRecord({ slug: 'held', title: 'Held', publishedAt: '2025-01-15T10:00:00.000Z' }));
  const clientDir = path.join(makeTempDir('meridian-lanes-'), 'client');
  const fifo = path.join(clientDir, 'article', 'held', 'index.html');
  fs.mkdirSync(path.dirname(fifo), { recursive: true });
  execFileSync('mkfifo', [fifo]);
  await writeCurrentManifest(runtime, clientDir);

  let writer: number | undefined;
  const release = () => {
    if (writer === undefined) return;
    fs.writeSync(writer, PAGE('Held'));
    fs.closeSync(writer);
    writer = undefined;
  };
  const rendered: string[] = [];
  const logged: string[] = [];
  onTestFailed(() => console.log(`the worker's log:\n${logged.join('\n')}`));
  const worker = startRegenerationWorker(runtime, workerOptions(runtime, clientDir, logged, rendered));
  // Released before the worker stops (a failed test must not leave Pagefind blocked), stopped before the store closes.
  cleanups.push(() => worker.stop());
  cleanups.push(release);

  const hold = async () => {
    // A write-only open that does not block succeeds only once a reader (Pagefind) has the FIFO open.
    const opened = await waitFor(() => {
      try {
        writer = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENXIO') return false;
        throw error;
      }
    });
    expect(opened, 'the start-up compaction never read the held page').toBe(true);
    return { release };
  };
  return { runtime, worker, clientDir, rendered, logged, hold };
}

describe('worker lanes', () => {
  it('renders a page queued while a search build runs without waiting for the build', async () => {
    const { runtime, worker, clientDir, logged, hold } = await workerWithHeldBuild();
    const { release } = await hold();

    // The compaction is indexing (blocked on the held page) when the publish's page job comes in.
    await runtime.store.jobs.enqueue(['/article/fresh'], queuedJustNow());
    worker.wake();
    const pageFile = path.join(clientDir, 'article', 'fresh', 'index.html');
    const written = await waitFor(() => fs.existsSync(pageFile));
    expect(written, 'the page job waited behind the search build').toBe(true);
    expect(fs.readFileSync(pageFile, 'utf8')).toContain('/article/fresh');
    // ...and the build was still running: nothing indexed yet.
    expect(worker.stats().searchBuilds).toBe(0);
    expect(await readPeriodsFile(clientDir)).toEqual([]);

    release();
    // The job's own line comes last, once the bundle, periods.json and the stats are written.
    expect(await waitFor(() => logged.some((line) => line.startsWith('[publish] /pagefind/compact written')))).toBe(true);
    expect(await readPeriodsFile(clientDir)).toEqual(['2025-01']);
    expect(await runtime.store.jobs.size()).toBe(0);
    const stats = worker.stats();
    expect(stats.searchBuilds).toBe(1);
    // The page job and the compaction (stored on lowdb, local to this server on PostgreSQL).
    expect(stats.jobs).toBe(2);
    expect(stats.written).toBe(1);
    expect(stats.failed).toBe(0);
  });

  it('holds search back while a page job is ready, so the head is indexed with the page in it', async () => {
    const { runtime, worker, clientDir, rendered, logged, hold } = await workerWithHeldBuild();
    const { release } = await hold();
    release();
    expect(await waitFor(() => logged.some((line) => line.startsWith('[publish] /pagefind/compact written')))).toBe(true);

    // A publish: the page and its head bundle queued together, both ready at once.
    const today = new Date().toISOString().slice(0, 10);
    await runtime.store.articles.insert(articleRecord({ slug: 'today', title: 'Today', publishedAt: new Date().toISOString() }));
    await runtime.store.jobs.enqueue([`/pagefind/head-${today}`, '/article/today'], queuedJustNow());
    worker.wake();
    expect(await waitFor(() => logged.some((line) => line.startsWith(`[publish] /pagefind/head-${today} written`)))).toBe(true);
    expect(await readPeriodsFile(clientDir)).toContain(`head-${today}`);
    expect(rendered).toEqual(['/article/today']);
    // Every build of the head read the page: one started before the page was written would have indexed 0 pages.
    const headBuilds = logged.filter((line) => line.includes(`(bundle head-${today})`));
    expect(headBuilds.length).toBeGreaterThan(0);
    for (const line of headBuilds) expect(line).toContain('search index rebuilt: 1 pages');
  });

  it('stop() waits for a search build that is running', async () => {
    const { worker, clientDir, hold } = await workerWithHeldBuild();
    const { release } = await hold();
    let periodsAtStop: string[] | undefined;
    const stopping = worker.stop().then(async () => {
      periodsAtStop = await readPeriodsFile(clientDir);
    });
    // The pages lane is idle and ends at once; the search lane is still inside the build.
    // No event marks the pages lane's end: a short wait gives a stop that skipped the build time to finish.
    await sleep(50);
    expect(periodsAtStop).toBeUndefined();
    release();
    await stopping;
    expect(periodsAtStop).toEqual(['2025-01']);
  });

  it('stop() after the last job records the render manifest, so the next start has nothing to reconcile', async () => {
    const { runtime, worker, clientDir, hold } = await workerWithHeldBuild();
    const { release } = await hold();
    // A write while the compaction is held (a draft saved, a section page queued): the page is written,
    // but the queue is not empty until the compaction ends.
    await runtime.store.articles.insert(articleRecord({ slug: 'draft', title: 'Draft', status: 'draft', publishedAt: undefined }));
    await runtime.store.jobs.enqueue(['/section/world'], queuedJustNow());
    worker.wake();
    expect(await waitFor(() => fs.existsSync(path.join(clientDir, 'section', 'world', 'index.html')))).toBe(true);
    const before = readRenderManifest(manifestFileFor(clientDir))!;
    expect(before.version).toBeLessThan(await runtime.store.articles.version());

    // The stop lands while the last job runs: the pages lane ends before the queue is empty.
    const stopping = worker.stop();
    release();
    await stopping;
    expect(await runtime.store.jobs.size()).toBe(0);
    const after = readRenderManifest(manifestFileFor(clientDir))!;
    expect(after.version).toBe(await runtime.store.articles.version());
    expect(after.storeId).toBe(runtime.store.id);
  });

  // On lowdb every job is in the stored queue. On PostgreSQL a server's search jobs are its own, in
  // memory: the manifest names those left, and the next start queues them again.
  it('stop() with jobs still queued records the render manifest, and the next start runs them without a reconcile', async () => {
    const runtime = await makeRuntime();
    cleanups.push(() => closeQuietly(runtime.store));
    const clientDir = path.join(makeTempDir('meridian-lanes-'), 'client');
    fs.mkdirSync(clientDir, { recursive: true });
    await writeCurrentManifest(runtime, clientDir);
    // The first page's render is held, so the stop lands while it runs and the second job is still queued.
    let releaseRender!: () => void;
    const renderHeld = new Promise<void>((resolve) => (releaseRender = resolve));
    const logged: string[] = [];
    const started: string[] = [];
    onTestFailed(() => console.log(`the worker's log:\n${logged.join('\n')}`));
    const options = workerOptions(runtime, clientDir, logged);
    const worker = startRegenerationWorker(runtime, {
      ...options,
      render: async (publicPath) => {
        started.push(publicPath);
        if (publicPath === '/article/first') await renderHeld;
        return options.render(publicPath);
      },
    });
    cleanups.push(() => worker.stop());
    cleanups.push(releaseRender);
    // The start-up check is done (it read the store's version) once its compaction has run.
    expect(await waitFor(() => logged.some((line) => line.startsWith('[publish] /pagefind/compact ')))).toBe(true);

    await runtime.store.articles.insert(articleRecord({ slug: 'first', title: 'First' }));
    await runtime.store.jobs.enqueue(['/article/first'], queuedJustNow());
    worker.wake();
    expect(await waitFor(() => started.includes('/article/first'))).toBe(true);
    await runtime.store.articles.insert(articleRecord({ slug: 'second', title: 'Second' }));
    await runtime.store.jobs.enqueue(['/article/second'], queuedJustNow());

    const stopping = worker.stop();
    releaseRender();
    await stopping;
    expect((await runtime.store.jobs.list(10)).map((job) => job.path)).toContain('/article/second');
    const manifest = readRenderManifest(manifestFileFor(clientDir))!;
    expect(manifest.version).toBe(await runtime.store.articles.version());
    expect(logged.filter((line) => / regeneration job\(s\) queued: the next start runs them$/.test(line))).toHaveLength(1);
    // The first page's search bundle was queued after its page was written: in the stored queue on
    // lowdb, in the server's memory on PostgreSQL, and then in the manifest.
    const searchJob = '/pagefind/2025-01';
    const storedPaths = (await runtime.store.jobs.list(10)).map((job) => job.path);
    if (runtime.store.pages.shared) {
      expect(manifest.searchJobs).toEqual([searchJob]);
      expect(storedPaths).not.toContain(searchJob);
    } else {
      expect(manifest.searchJobs).toBeUndefined();
      expect(storedPaths).toContain(searchJob);
    }

    // The next start on the same folder: nothing to reconcile, and the job kept in the queue runs.
    const nextLog: string[] = [];
    onTestFailed(() => console.log(`the next worker's log:\n${nextLog.join('\n')}`));
    const next = startRegenerationWorker(runtime, workerOptions(runtime, clientDir, nextLog));
    cleanups.push(() => next.stop());
    expect(await waitFor(() => fs.existsSync(path.join(clientDir, 'article', 'second', 'index.html')))).toBe(true);
    expect(await waitFor(async () => (await runtime.store.jobs.size()) === 0)).toBe(true);
    expect(nextLog.filter((line) => line.includes('reconcil'))).toEqual([]);
    expect(next.stats().reconciled).toBe(0);
    expect(await waitFor(() => nextLog.some((line) => line.startsWith(`[publish] ${searchJob} `)))).toBe(true);
    // Once the queues run empty the manifest no longer names the job.
    expect(await waitFor(() => readRenderManifest(manifestFileFor(clientDir))?.searchJobs === undefined)).toBe(true);
  });

  it('no render manifest names a version whose change is between its store write and its hooks', async () => {
    const { runtime, worker, clientDir, logged, hold } = await workerWithHeldBuild();
    const { release } = await hold();
    release();
    expect(await waitFor(() => logged.some((line) => line.startsWith('[publish] /pagefind/compact written')))).toBe(true);
    const before = readRenderManifest(manifestFileFor(clientDir))!;
    expect(before.version).toBe(await runtime.store.articles.version());

    // A save whose store write is done while its hooks have not queued its pages yet.
    let hooksRun!: () => void;
    const hooksHeld = new Promise<void>((resolve) => (hooksRun = resolve));
    let stored!: () => void;
    const storeWritten = new Promise<void>((resolve) => (stored = resolve));
    const saving = trackArticleWrite(runtime, async () => {
      await runtime.store.articles.insert(articleRecord({ slug: 'unqueued', title: 'Unqueued', publishedAt: '2025-01-21T10:00:00.000Z' }));
      stored();
      await hooksHeld;
      await runtime.store.jobs.enqueue(['/article/unqueued'], queuedJustNow());
    });
    await storeWritten;
    expect(await runtime.store.articles.version()).toBeGreaterThan(before.version);

    // A stop now must not record the new version: its page is neither rendered nor queued.
    await worker.stop();
    expect(readRenderManifest(manifestFileFor(clientDir))!.version).toBe(before.version);
    hooksRun();
    await saving;
    expect(articleWritesPending(runtime)).toBe(false);
  });
});
