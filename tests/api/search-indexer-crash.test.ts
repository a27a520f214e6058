/**
 * Issue 31, item 7 on the real built server: Pagefind's indexing process (the child the server started)
 * killed while it indexes leaves the previous bundle served and intact, the build is not left waiting
 * for an answer that never comes, and the next run re-indexes; one killed between builds is replaced by
 * the next publish's, and one killed before it first answered fails the build instead of holding it.
 * Chromium then finds every article through Pagefind alone.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { childProcessesNamed } from '../../bench/process-tree.ts';
import { adminClient, clearOfMidnight, createArticle, type TestClient, waitFor } from './support.ts';

/**
 * Bytes queued unread on each Unix stream socket, by inode, and its peer's inode (ss): Node gives a
 * child its stdio as socket pairs, so this shows what one side wrote that the other has not read yet.
 */
function unixSockets(): Map<string, { unread: number; peer: string }> {
  const sockets = new Map<string, { unread: number; peer: string }>();
  for (const line of execFileSync('ss', ['-xnH'], { encoding: 'utf8' }).split('\n')) {
    // Netid State Recv-Q Send-Q Local-Address Local-Port(inode) Peer-Address Peer-Port(inode)
    const [, , unread, , , inode, , peer] = line.trim().split(/\s+/);
    if (inode && peer) sockets.set(inode, { unread: Number(unread), peer });
  }
  return sockets;
}

/** The inode of the socket open as file descriptor `fd` of process `pid`. */
function socketOf(pid: number, fd: number): string {
  const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
  const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
  if (!inode) throw new Error(`fd ${fd} of process ${pid} is ${link}, not a socket`);
  return inode;
}

/** Bytes written to process `pid`'s stdin that it has not read. */
const unreadInput = (pid: number) => unixSockets().get(socketOf(pid, 0))?.unread ?? 0;

/** Bytes process `pid` wrote to its stdout and stderr that this process has not read yet. */
function unreadOutput(pid: number): number {
  const sockets = unixSockets();
  return [1, 2].reduce((sum, fd) => sum + (sockets.get(sockets.get(socketOf(pid, fd))?.peer ?? '')?.unread ?? 0), 0);
}

/** Every file of a folder (relative path) with its inode and content hash: a bundle replaced or touched shows. */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const hash = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    out[path.relative(dir, file)] = `${fs.statSync(file).ino}:${hash}`;
  }
  return out;
}

describe('a Pagefind process killed mid-index', () => {
  let server: TestServer;
  let admin: TestClient;
  let head = '';

  const lines = () => server.output().split('\n');
  /** Pages indexed by each "search index rebuilt" line of the head bundle, in order. */
  const rebuilds = () => lines().filter((l) => l.includes('search index rebuilt') && l.endsWith(`(bundle ${head})`));
  /** Search jobs (a head re-index, a compaction, a re-index of all) that began (a debug line), and those that ended. */
  const starts = () => lines().filter((l) => /^\[publish\] \/pagefind\/\S+ started$/.test(l));
  const ends = () => lines().filter((l) => /^\[publish\] \/pagefind\/\S+ (?:(?:written|unchanged|deleted|absent) in |failed \()/.test(l));
  /** Whether a rebuild of the head since the `since`-th indexed `pages` pages. */
  const rebuiltWith = (since: number, pages: number) =>
    rebuilds()
      .slice(since)
      .some((l) => l.includes(`rebuilt: ${pages} pages`));
  const indexerOf = () => childProcessesNamed('pagefind', server.process.pid);

  // Today's head bundle is named once: the file runs within one UTC day.
  beforeAll(() => clearOfMidnight(), 11 * 60_000);

  beforeAll(async () => {
    server = await startServer({ env: { LOG_LEVEL: 'debug' } });
    admin = await adminClient(server);
    head = `head-${new Date().toISOString().slice(0, 10)}`;
    await createArticle(admin, { title: 'The heron bulletin', status: 'published' });
    await waitFor('the head bundle with the first article', async () => rebuiltWith(0, 1), 90_000);
    // Settled: the start's reconcile done, and every search job it and the publish queued ended, a while ago.
    await waitFor(
      'the start-up reconcile',
      async () => !/\[publish\] reconciling/.test(server.output()) || /\[publish\] reconciled/.test(server.output()),
      90_000,
    );
    let quiet = { starts: -1, since: Date.now() };
    await waitFor(
      'no search job running or starting',
      async () => {
        if (starts().length !== quiet.starts) quiet = { starts: starts().length, since: Date.now() };
        return starts().length === ends().length && Date.now() - quiet.since > 3000;
      },
      90_000,
    );
    await waitFor("the server's Pagefind process", async () => indexerOf().length === 1);
  }, 180_000);

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${server?.output().slice(-6000)}`));
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('leaves the previous bundle served and intact, and its retry indexes the new article', async () => {
    const pagefindDir = path.join(server.clientDir, 'pagefind');
    const bundleDir = path.join(pagefindDir, head);
    const before = filesOf(bundleDir);
    // A build replaces a bundle by renaming a complete new folder over it: the folder's inode says whether one did.
    const folder = fs.statSync(bundleDir).ino;
    const rebuildsBefore = rebuilds().length;
    const startsBefore = starts().length;
    const [indexer] = indexerOf();
    // Stopped first, so the re-index the publish queues is in flight, waiting for an answer, when it dies.
    process.kill(indexer!, 'SIGSTOP');
    const unreadBefore = unreadInput(indexer!);
    try {
      await createArticle(admin, { title: 'The osprey report', status: 'published' });
      await waitFor('a re-index to begin', async () => starts().length > startsBefore, 60_000);
      // Its first call is written to the stopped process, unread: the build waits for the answer.
      await waitFor('the re-index to call the stopped Pagefind process', async () => unreadInput(indexer!) > unreadBefore, 60_000);
      expect(rebuilds().length).toBe(rebuildsBefore);
    } finally {
      process.kill(indexer!, 'SIGKILL');
    }
    await waitFor('the build to fail', async () => /Indexing \S+ for search failed \(the Pagefind process died/.test(server.output()));

    // The server frozen for the look, so its retry (a second on) cannot swap a new bundle in meanwhile.
    process.kill(server.process.pid!, 'SIGSTOP');
    try {
      // What it logged before the freeze has arrived: another build that had begun already would show here.
      await waitFor('what the server logged before the freeze', async () => unreadOutput(server.process.pid!) === 0, 10_000);
      if (fs.statSync(bundleDir).ino === folder) {
        // The previous bundle exactly as it was (same files, bytes and inodes).
        expect(filesOf(bundleDir)).toEqual(before);
      } else console.warn('A later build had swapped in a complete new bundle before the server was frozen.');
      // No half-built folder left behind, unless a build that began after the failure is writing its own.
      if (starts().length === startsBefore + 1) expect(fs.readdirSync(pagefindDir).filter((name) => name.startsWith('.next-'))).toEqual([]);
      expect(JSON.parse(fs.readFileSync(path.join(pagefindDir, 'periods.json'), 'utf8')).periods).toContain(head);
    } finally {
      process.kill(server.process.pid!, 'SIGCONT');
    }
    expect((await fetch(new URL(`/pagefind/${head}/pagefind-entry.json`, server.url))).status).toBe(200);

    // The job's retry starts a new Pagefind process and indexes the new article.
    await waitFor('the retry to rebuild the head with the new article', async () => rebuiltWith(rebuildsBefore, 2), 60_000);
    await waitFor('one Pagefind process again', async () => indexerOf().length === 1);
    expect(indexerOf()[0]).not.toBe(indexer);
  });

  it('replaces a Pagefind process that died between builds at the next publish', async () => {
    const rebuildsBefore = rebuilds().length;
    const [indexer] = indexerOf();
    process.kill(indexer!, 'SIGKILL');
    await waitFor('the process gone', async () => !indexerOf().includes(indexer!));
    await createArticle(admin, { title: 'The kingfisher dispatch', status: 'published' });
    await waitFor('the publish to rebuild the head with the new article', async () => rebuiltWith(rebuildsBefore, 3), 60_000);
    expect(server.output()).not.toMatch(/backend is closed|Pagefind backend closed/);
  });

  it('does not wait forever on a Pagefind process killed before it first answered', async () => {
    const rebuildsBefore = rebuilds().length;
    const deaths = () => server.output().split('the Pagefind process died').length;
    const deathsBefore = deaths();
    // Every Pagefind process the server starts is killed as soon as it shows, as a crash at start-up would.
    let killed = 0;
    const killer = setInterval(() => {
      for (const pid of indexerOf())
        try {
          process.kill(pid, 'SIGKILL');
          killed++;
        } catch {
          // Gone already.
        }
    }, 2);
    // The killer races the build from outside: on a starved machine a build can finish before a kill lands,
    // so the next publish tries again (a CI run saw one escape).
    let pages = 3;
    try {
      for (let attempt = 1; deaths() === deathsBefore; attempt++) {
        if (attempt > 5) throw new Error('five builds in a row finished before their Pagefind process could be killed');
        const before = rebuilds().length;
        pages++;
        await createArticle(admin, { title: `The egret notice ${attempt}`, status: 'published' });
        await waitFor(
          'a build to fail on a killed process (or finish before the kill landed)',
          async () => deaths() > deathsBefore || rebuiltWith(before, pages),
          60_000,
        );
      }
    } finally {
      clearInterval(killer);
    }
    expect(killed).toBeGreaterThan(0);
    // Left alone again, the job's retry indexes the article: the search lane did not hang.
    await waitFor('the retry to rebuild the head with the new article', async () => rebuiltWith(rebuildsBefore, pages), 60_000);
  }, 150_000);

  it('Chromium finds every article through Pagefind alone', async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    try {
      // One reader, three searches: the bundles it fetched for the first are cached for the next, as for a reader.
      const context = await browser.newContext();
      // Only the Pagefind bundles can answer.
      await context.route('**/api/search**', (route) => route.abort());
      const page = await context.newPage();
      for (const [query, title] of [
        ['heron', 'The heron bulletin'],
        ['osprey', 'The osprey report'],
        ['kingfisher', 'The kingfisher dispatch'],
      ] as const) {
        await page.goto(new URL(`/search?q=${query}`, server.url).href);
        const grid = page.getByRole('list', { name: 'Search results' });
        await grid.getByTestId('article-card').first().waitFor({ timeout: 20_000 });
        expect(await grid.getAttribute('data-engine'), query).toBe('pagefind');
        expect(await grid.locator('.card-title').allTextContents(), query).toContain(title);
      }
    } finally {
      await browser.close();
    }
    // Three page loads that each start Pagefind's WebAssembly: about 10 s on a quiet machine, over 30 s beside a loaded CI.
  }, 90_000);
});
