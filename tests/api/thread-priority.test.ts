/**
 * The real server's background work yields the core to the thread that answers requests (Linux keeps
 * a nice value per thread): the render thread and Pagefind's indexing process run at BACKGROUND_NICE;
 * the main thread, libuv's pool and V8's helpers at the value the server was started with.
 */
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { adminClient, createArticle, waitFor } from './support.ts';
import { BACKGROUND_NICE } from '../../src/server/thread-priority.ts';
import { childProcessesNamed } from '../../bench/process-tree.ts';

type Thread = { tid: number; name: string; nice: number };

/** Every thread of process `pid`: its name and nice value (fields 2 and 19 of /proc/<pid>/task/<tid>/stat). */
function threadsOf(pid: number): Thread[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The name may hold spaces and parentheses: count the fields after its last closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid: Number(tid), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) };
  });
}

// What the server inherits from this process (a suite started under `nice -n 10` has nothing to see).
const startedAt = os.getPriority(process.pid);

describe.runIf(process.platform === 'linux' && startedAt < BACKGROUND_NICE)('thread priorities of the running server', () => {
  let server: TestServer;
  let pid: number;

  beforeAll(async () => {
    server = await startServer();
    pid = server.process.pid!;
  });
  afterAll(() => server?.stop());

  it("runs the render thread and Pagefind's indexing process, every thread of it, at the background value, and nothing else", async () => {
    const admin = await adminClient(server);
    await createArticle(admin, { title: 'Indexed a step below the readers', section: 'world', status: 'published' });
    await waitFor('the search index built', async () => server.output().includes('search index rebuilt'));
    // The render thread (started by the first page) lowers itself; the lowdb store's text index worker, where there is one, does not.
    expect(
      threadsOf(pid)
        .filter((t) => t.name === 'WorkerThread')
        .map((t) => t.nice),
    ).toContain(BACKGROUND_NICE);
    const pagefind = childProcessesNamed('pagefind', pid);
    expect(pagefind).toHaveLength(1);
    const threads = threadsOf(pagefind[0]!);
    expect(threads.length).toBeGreaterThan(1);
    for (const thread of threads) expect(thread, `${thread.name} ${thread.tid}`).toMatchObject({ nice: BACKGROUND_NICE });
    // The rest of the server keeps its value: the pool does the file writes a request waits for, and
    // V8's helpers, lowered, fell behind with their marking at 100,000 articles (see thread-priority.ts).
    const own = threadsOf(pid);
    expect(own.find((t) => t.tid === pid)?.nice).toBe(startedAt);
    for (const name of ['libuv-worker', 'V8Worker']) {
      const named = own.filter((t) => t.name === name);
      expect(named.length, name).toBeGreaterThan(0);
      for (const thread of named) expect(thread, `${name} ${thread.tid}`).toMatchObject({ nice: startedAt });
    }
  });
});
