/**
 * The render thread: loads the built Astro bundle and draws every generated file (reader pages,
 * feeds, sitemaps, robots.txt) through its render twin from the data the regeneration worker
 * loaded, and compresses the files the worker writes, at a
 * lower CPU priority than the server's own thread. A page's server render (Astro and React, in one
 * piece: docs/performance.md, 2026-11-26), its brotli and gzip twins and the garbage they make then stay off the event loop
 * that answers readers and writers, and off libuv's pool, whose threads its file writes wait for.
 * Requests reach the bundle's handler in memory (light-my-request), never through a socket, so
 * nothing outside this process can call it. Given the file a page goes to, the thread also compares it
 * with the page and makes the twins of a changed one in the same message, so the page does not travel
 * back here to be compressed and the server's thread does not read the old file.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import type http from 'node:http';
import inject from 'light-my-request';
import { TWIN_PREFIX, type TwinPage } from '../../schemas/pages.ts';
import { lowerThreadPriority } from '../thread-priority.ts';
import { threadCpuMicros } from '../thread-cpu.ts';
import { compressBodySync, type Twins } from './compress.ts';
import { prepareWrite, type PreparedWrite } from './files.ts';

export type RenderThreadData = { serverEntry: string; nice: number };
export type RenderRequest =
  { seq: number; path: string; twin: TwinPage; file?: string } | { seq: number; compress: { file: string; body: Uint8Array } };
/**
 * The thread's CPU time so far (µs): in all, loading the bundle, and making brotli and gzip twins. The
 * rest of it is drawing pages (Astro and React, with the in-memory request around them).
 */
export type ThreadCpu = { total: number; bundle: number; brotli: number; gzip: number };
export type RenderReply = (
  { seq: number; body: Uint8Array; prepared?: PreparedWrite } | { seq: number; twins: Twins } | { seq: number; error: string }
) & {
  cpu: ThreadCpu;
};

type AstroMiddleware = (req: http.IncomingMessage, res: http.ServerResponse, next: undefined, locals: App.Locals) => Promise<void>;

const port = parentPort!;
const { serverEntry, nice } = workerData as RenderThreadData;
lowerThreadPriority(nice);
// The bundle must not start a standalone server of its own.
process.env.ASTRO_NODE_AUTOSTART = 'disabled';
const cpu: ThreadCpu = { total: 0, bundle: 0, brotli: 0, gzip: 0 };
const loaded = import(pathToFileURL(serverEntry).href).then((bundle: { handler: AstroMiddleware }) => {
  cpu.bundle = threadCpuMicros();
  return bundle.handler;
});
/** What the thread spent so far, sent with each reply. */
const spent = (): ThreadCpu => ({ ...cpu, total: threadCpuMicros() });

async function render({ path, twin }: { path: string; twin: TwinPage }): Promise<Uint8Array> {
  const handler = await loaded;
  const response = await inject((req, res) => void handler(req, res, undefined, { twin }), { method: 'GET', url: `${TWIN_PREFIX}${path}` });
  if (response.statusCode !== 200)
    throw new Error(`the twin of ${path} answered HTTP ${response.statusCode}: ${response.body.slice(0, 300)}`);
  // A copy of its own, so its memory can be handed to the worker's thread instead of copied again.
  return new Uint8Array(response.rawPayload);
}

/** Makes twins on this thread, counting their CPU. */
function compress(file: string, body: Uint8Array): Twins {
  const made = compressBodySync(file, body);
  cpu.brotli += made.cpu.brotli;
  cpu.gzip += made.cpu.gzip;
  return made.twins;
}

const fail = (seq: number, error: unknown) =>
  port.postMessage({ seq, error: (error as Error).stack ?? String(error), cpu: spent() } satisfies RenderReply);

port.on('message', (request: RenderRequest) => {
  if ('compress' in request) {
    try {
      // Copied across, not transferred: zlib's output may share its memory with other buffers.
      port.postMessage({
        seq: request.seq,
        twins: compress(request.compress.file, request.compress.body),
        cpu: spent(),
      } satisfies RenderReply);
    } catch (error) {
      fail(request.seq, error);
    }
    return;
  }
  render(request)
    .then((body) => {
      const prepared = request.file === undefined ? undefined : prepareWrite(request.file, body, compress);
      port.postMessage({ seq: request.seq, body, ...(prepared ? { prepared } : {}), cpu: spent() } satisfies RenderReply, [
        body.buffer as ArrayBuffer,
      ]);
    })
    .catch((error: unknown) => fail(request.seq, error));
});
