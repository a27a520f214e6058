/**
 * The server's handle on its render thread (render-thread-worker.ts): hands it a generated file's
 * twin and data and answers the file, or a file's body and answers its compressed twins. The thread is
 * started on first use and started again after it dies; a request that outlasts its deadline ends
 * the thread, so one stuck page cannot hold the others.
 */
import { Worker } from 'node:worker_threads';
import type { TwinPage } from '../../schemas/pages.ts';
import type { RenderReply, RenderRequest, RenderThreadData, ThreadCpu } from './render-thread-worker.ts';
import type { Twins } from './compress.ts';
import type { PreparedWrite } from './files.ts';
import { BACKGROUND_NICE } from '../thread-priority.ts';

// Not a literal inside `new URL(...)`: a bundler would copy the file as an asset without its imports.
const WORKER_NAME = './render-thread-worker.ts';
const WORKER_FILE = new URL(WORKER_NAME, import.meta.url);

/** A drawn file, and with `file` given, what the thread found out about it there (writeFileAtomic's `prepared`). */
export type RenderedFile = { body: Uint8Array; prepared?: PreparedWrite };

export type RenderThread = {
  /**
   * The bytes of `publicPath` (a page's HTML, a feed, a sitemap...), drawn by its twin from `twin`; given
   * `file`, where they are to be written, whether it holds them already or else their compressed twins.
   */
  render(publicPath: string, twin: TwinPage, file?: string): Promise<RenderedFile>;
  /** The brotli and gzip twins of a file about to be written (a Compressor, run on the thread). */
  compress(file: string, body: Uint8Array): Promise<Twins>;
  /** Ends the thread (renders still waiting fail). */
  close(): Promise<void>;
  /** The CPU time (µs) its thread(s) spent so far, as of their last replies (a thread started again counts from zero). */
  cpu(): ThreadCpu;
};

export type RenderThreadOptions = {
  /** A render that takes longer fails and the thread is started again. @default 30000 */
  timeoutMs?: number;
  /** The thread's nice value (Linux): pages are background work next to the requests the server answers. @default 10 */
  nice?: number;
  /** Starts the thread and loads the bundle now, not at the first render, so the second it takes overlaps the caller's own work. */
  eager?: boolean;
};

type Pending = { resolve: (reply: RenderReply) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

/** No CPU spent: the start of every tally. */
const NO_CPU: ThreadCpu = Object.freeze({ total: 0, bundle: 0, brotli: 0, gzip: 0 });

/** Twins as Buffers again (a structured clone arrives as plain Uint8Arrays). */
function buffersOf(twins: Twins): Twins {
  const out: Twins = {};
  for (const [encoding, twin] of Object.entries(twins))
    out[encoding as keyof Twins] = Buffer.from(twin.buffer, twin.byteOffset, twin.byteLength);
  return out;
}

function addCpu(a: ThreadCpu, b: ThreadCpu): ThreadCpu {
  return { total: a.total + b.total, bundle: a.bundle + b.bundle, brotli: a.brotli + b.brotli, gzip: a.gzip + b.gzip };
}

/** A render thread for the built bundle at `serverEntry` (OUT_DIR/server/entry.mjs). */
export function startRenderThread(serverEntry: string, options: RenderThreadOptions = {}): RenderThread {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const data: RenderThreadData = { serverEntry, nice: options.nice ?? BACKGROUND_NICE };
  const pending = new Map<number, Pending>();
  let seq = 0;
  let worker: Worker | undefined;
  let closed = false;
  /** The CPU of threads that ended, and the running one's as of its last reply. */
  let ended = NO_CPU;
  let current = NO_CPU;

  const failAll = (error: Error) => {
    for (const { reject, timer } of pending.values()) {
      clearTimeout(timer);
      reject(error);
    }
    pending.clear();
  };

  const spawn = (): Worker => {
    // React's production runtime whatever this process runs as (vitest sets "test"): development's is far slower.
    const thread = new Worker(WORKER_FILE, { workerData: data, env: { ...process.env, NODE_ENV: 'production' } });
    // Waiting renders keep the process alive through their promises, not the thread.
    thread.unref();
    thread.on('message', (reply: RenderReply) => {
      current = reply.cpu;
      const waiting = pending.get(reply.seq);
      if (!waiting) return;
      pending.delete(reply.seq);
      clearTimeout(waiting.timer);
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else waiting.resolve(reply);
    });
    const lost = (error: Error) => {
      if (worker !== thread) return;
      worker = undefined;
      ended = addCpu(ended, current);
      current = NO_CPU;
      failAll(error);
    };
    thread.on('error', (error) => lost(new Error(`the render thread failed: ${error.message}`, { cause: error })));
    thread.on('exit', (code) => lost(new Error(`the render thread stopped (exit code ${code})`)));
    return thread;
  };

  if (options.eager) worker = spawn();

  /** Sends a request and waits for its reply, for at most the deadline. */
  const ask = (what: string, request: (seq: number) => RenderRequest): Promise<RenderReply> => {
    if (closed) return Promise.reject(new Error('the render thread is closed'));
    const thread = (worker ??= spawn());
    const id = ++seq;
    return new Promise<RenderReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${what} took over ${timeoutMs} ms; the render thread is started again`));
        // Whatever else it was doing fails with it and is retried by the worker.
        if (worker === thread) {
          worker = undefined;
          failAll(new Error(`the render thread was stopped: ${what} took over ${timeoutMs} ms`));
          void thread.terminate();
        }
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      thread.postMessage(request(id));
    });
  };

  return {
    async render(publicPath, twin, file) {
      const reply = await ask(`rendering ${publicPath}`, (id) => ({
        seq: id,
        path: publicPath,
        twin,
        ...(file === undefined ? {} : { file }),
      }));
      if (!('body' in reply)) throw new Error(`the render thread answered ${publicPath} without a page`);
      const { prepared } = reply;
      if (!prepared) return { body: reply.body };
      return { body: reply.body, prepared: prepared.unchanged ? prepared : { unchanged: false, twins: buffersOf(prepared.twins) } };
    },
    async compress(file, body) {
      const reply = await ask(`compressing ${file}`, (id) => ({ seq: id, compress: { file, body } }));
      if (!('twins' in reply)) throw new Error(`the render thread answered ${file} without its twins`);
      return buffersOf(reply.twins);
    },
    cpu: () => addCpu(ended, current),
    async close() {
      closed = true;
      const thread = worker;
      worker = undefined;
      failAll(new Error('the render thread is closed'));
      await thread?.terminate();
    },
  };
}

/**
 * `count` render threads behind one handle, for renders that run side by side (a reconcile, `npm run
 * rebuild -- --all`): each request goes to the thread with the fewest in flight. A thread starts on its
 * first request, so a pool that only ever has one render at a time runs one thread.
 */
export function startRenderPool(serverEntry: string, count: number, options: RenderThreadOptions = {}): RenderThread {
  const threads = Array.from({ length: Math.max(1, count) }, () => ({ thread: startRenderThread(serverEntry, options), inFlight: 0 }));
  const on = async <T>(ask: (thread: RenderThread) => Promise<T>): Promise<T> => {
    const least = threads.reduce((best, candidate) => (candidate.inFlight < best.inFlight ? candidate : best));
    least.inFlight++;
    try {
      return await ask(least.thread);
    } finally {
      least.inFlight--;
    }
  };
  return {
    render: (publicPath, twin, file) => on((thread) => thread.render(publicPath, twin, file)),
    compress: (file, body) => on((thread) => thread.compress(file, body)),
    cpu: () => threads.reduce((sum, { thread }) => addCpu(sum, thread.cpu()), NO_CPU),
    close: async () => {
      await Promise.all(threads.map(({ thread }) => thread.close()));
    },
  };
}
