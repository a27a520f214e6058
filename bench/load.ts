/**
 * The load generator, run as its own process so it never shares a CPU queue with the server:
 * reads one job as JSON from argv, runs autocannon (or, for a job with a rate, a paced reader),
 * prints one JSON line with the result.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import autocannon from 'autocannon';

export type LoadJob = {
  url: string;
  connections: number;
  durationS: number;
  /**
   * Requests a second, spread evenly over time (readers arriving at that rate, whatever the answers
   * take); unset, each connection sends its next request as soon as it has the last answer.
   */
  rate?: number;
  headers?: Record<string, string>;
  /** Another method and a body for every request (a page-view beacon's POST); GET without a body when unset. */
  method?: 'POST';
  body?: string;
  /** Votes: POST like/dislike on these article ids, each request from a new visitor cookie. */
  votes?: { articleIds: string[]; origin: string };
};

export type LoadResult = {
  rps: number;
  /** Latency percentiles in whole ms, from autocannon's histogram. */
  p50: number;
  p99: number;
  /**
   * p99 of the 2xx answers' latencies as measured, in ms (not rounded): sub-ms figures (static files) need it.
   * Like the histogram, it times each answer from the request autocannon queued before it; on a connection
   * the server closes, autocannon keeps the lost request queued, so every later answer there is timed
   * from an earlier request (why deploy/nginx.conf keeps reader connections open).
   */
  p99ExactMs: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Votes only: acknowledged (200) votes per "articleId:like|dislike". */
  acknowledged?: Record<string, number>;
  /** Votes only: requests sent whose answer was not read when the run stopped, per key. */
  inFlight?: Record<string, number>;
};

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A visitor id in the form the server accepts (26 base32 characters), as a browser's cookie holds it. */
function createVisitorId(): string {
  const bytes = randomBytes(26);
  let id = '';
  for (const byte of bytes) id += BASE32[byte & 31];
  return id;
}

function countKeys(keys: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

async function runJob(job: LoadJob): Promise<LoadResult> {
  const acknowledged: Record<string, number> = {};
  // A connection has one request outstanding at a time (no pipelining): its context names it.
  const outstanding = new Map<Record<string, unknown>, string>();
  let sent = 0;
  const requests = job.votes
    ? [
        {
          setupRequest: (request: Record<string, unknown>, context: Record<string, unknown>) => {
            const id = job.votes!.articleIds[sent % job.votes!.articleIds.length]!;
            const kind = sent++ % 3 === 2 ? 'dislike' : 'like';
            context.key = `${id}:${kind}`;
            outstanding.set(context, `${id}:${kind}`);
            return {
              ...request,
              method: 'POST',
              path: `/api/articles/${id}/${kind}`,
              headers: { Origin: job.votes!.origin, Cookie: `vid=${createVisitorId()}` },
            };
          },
          onResponse: (status: number, _body: string, context: Record<string, unknown>) => {
            outstanding.delete(context);
            if (status === 200) acknowledged[context.key as string] = (acknowledged[context.key as string] ?? 0) + 1;
          },
        },
      ]
    : undefined;
  // Every 2xx answer's latency, as autocannon's histogram counts them but without its rounding to whole ms.
  const latencies: number[] = [];
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.durationS,
    timeout: 10,
    ...(job.rate ? { overallRate: job.rate } : {}),
    ...(job.headers ? { headers: job.headers } : {}),
    ...(job.method ? { method: job.method } : {}),
    ...(job.body !== undefined ? { body: job.body } : {}),
    ...(requests ? { requests } : {}),
  }).on('response', (_client, status, _bytes, responseTime) => {
    if (status >= 200 && status < 300) latencies.push(responseTime);
  });
  latencies.sort((a, b) => a - b);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p99ExactMs: latencies[Math.max(0, Math.ceil(0.99 * latencies.length) - 1)] ?? NaN,
    requests: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    ...(job.votes ? { acknowledged, inFlight: countKeys([...outstanding.values()]) } : {}),
  };
}

/**
 * Readers at a steady rate (`job.rate` a second, spread evenly), over `job.connections` kept-alive
 * sockets speaking plain HTTP/1.1: each request whose time has come goes out on an idle socket and
 * is timed from then to the last byte of its answer; one that finds every socket busy waits for one
 * and is timed from when it was due, so an answer that holds the sockets up is charged for the
 * requests it held back (as wrk2 does). autocannon's own rate sends each second's requests at once
 * at the start of the second, which measures a burst at full speed, not readers arriving one by one.
 * Answers must carry a Content-Length (static files do), be chunked (the API's JSON) or be a 204 or 304. Votes and
 * POST bodies are sent as `runJob` sends them.
 */
/** `remaining` of an answer sent in chunks. */
const CHUNKED = -2;

async function runPaced(job: LoadJob & { rate: number }): Promise<LoadResult> {
  const target = new URL(job.url);
  const requestOf = (method: string, pathAndQuery: string, headers: Record<string, string>, body?: string) => {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}\r\n`);
    return Buffer.from(`${method} ${pathAndQuery} HTTP/1.1\r\nHost: ${target.host}\r\n${lines.join('')}\r\n${body ?? ''}`);
  };
  const fixed = requestOf(job.method ?? 'GET', `${target.pathname}${target.search}`, job.headers ?? {}, job.body);
  let sent = 0;
  // Votes as runJob sends them: like, like, dislike across the articles, each from a new visitor.
  const nextRequest = job.votes
    ? () => {
        const id = job.votes!.articleIds[sent % job.votes!.articleIds.length]!;
        const kind = sent++ % 3 === 2 ? 'dislike' : 'like';
        return requestOf('POST', `/api/articles/${id}/${kind}`, { Origin: job.votes!.origin, Cookie: `vid=${createVisitorId()}` }, '');
      }
    : () => fixed;
  const latencies: number[] = [];
  const counts = { requests: 0, ok: 0, non2xx: 0, errors: 0, timeouts: 0 };
  /** Due times of requests waiting for an idle socket. */
  const waiting: number[] = [];
  type Connection = { socket: net.Socket; busy: boolean; since: number; pending: Buffer; status: number; remaining: number };
  const idle: Connection[] = [];
  const send = (connection: Connection, since: number) => {
    connection.busy = true;
    connection.since = since;
    connection.status = 0;
    connection.remaining = -1;
    counts.requests++;
    connection.socket.write(nextRequest());
  };
  const open = () =>
    new Promise<Connection>((resolve, reject) => {
      const socket = net.connect(Number(target.port || 80), target.hostname, () => resolve(connection));
      const connection: Connection = { socket, busy: false, since: 0, pending: Buffer.alloc(0), status: 0, remaining: -1 };
      socket.setNoDelay(true);
      socket.on('error', (error) => {
        counts.errors++;
        reject(error);
      });
      socket.on('data', (chunk: Buffer) => {
        connection.pending = connection.pending.length ? Buffer.concat([connection.pending, chunk]) : chunk;
        if (connection.remaining < 0) {
          const end = connection.pending.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = connection.pending.subarray(0, end).toString('latin1');
          connection.status = Number(head.slice(9, 12));
          const length = /\r\ncontent-length: *(\d+)/i.exec(head);
          const bodiless = connection.status === 204 || connection.status === 304;
          const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
          if (!length && !bodiless && !chunked) throw new Error(`an answer without Content-Length from ${job.url}`);
          connection.remaining = length ? Number(length[1]) : chunked ? CHUNKED : 0;
          connection.pending = connection.pending.subarray(end + 4);
        }
        if (connection.remaining === CHUNKED) {
          // The API's small JSON answers: done at the last chunk (no JSON holds its CRLF 0 CRLF CRLF).
          const last = connection.pending.indexOf('0\r\n\r\n');
          if (last < 0 || (last > 0 && connection.pending.subarray(last - 2, last).toString() !== '\r\n')) return;
          connection.pending = connection.pending.subarray(last + 5);
        } else {
          if (connection.pending.length < connection.remaining) return;
          connection.pending = connection.pending.subarray(connection.remaining);
        }
        const ms = performance.now() - connection.since;
        if (connection.status >= 200 && connection.status < 300) {
          counts.ok++;
          latencies.push(ms);
        } else counts.non2xx++;
        connection.busy = false;
        const due = waiting.shift();
        if (due !== undefined) send(connection, due);
        else idle.push(connection);
      });
    });
  const connections = await Promise.all(Array.from({ length: job.connections }, open));
  idle.push(...connections);
  const interval = 1000 / job.rate;
  const started = performance.now();
  const end = started + job.durationS * 1000;
  for (let due = started; due < end;) {
    const now = performance.now();
    for (; due <= now && due < end; due += interval) {
      const connection = idle.pop();
      if (connection) send(connection, now);
      else waiting.push(due);
    }
    // Polled, not slept: a load generator that sleeps between requests on this kind of virtual machine
    // took milliseconds to wake for an answer (p99 3-8 ms against nginx alone, 0.5 ms polled), which
    // would time the generator rather than the server. It keeps its core busy, as autocannon does.
    await new Promise((resolve) => setImmediate(resolve));
  }
  // The answers still on their way, for at most the timeout.
  const deadline = performance.now() + 10_000;
  while ((waiting.length || connections.some((c) => c.busy)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  counts.timeouts += waiting.length + connections.filter((c) => c.busy).length;
  for (const connection of connections) connection.socket.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.max(0, Math.ceil(q * latencies.length) - 1)] ?? NaN;
  return { rps: counts.ok / job.durationS, p50: Math.round(at(0.5)), p99: Math.round(at(0.99)), p99ExactMs: at(0.99), ...counts };
}

const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
console.log(JSON.stringify(job.rate ? await runPaced({ ...job, rate: job.rate }) : await runJob(job)));
