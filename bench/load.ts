/**
 * The load generator, run as its own process so it never shares a CPU queue with the server:
 * reads one job as JSON from argv, runs autocannon, prints one JSON line with the result.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';

export type LoadJob = {
  url: string;
  connections: number;
  durationS: number;
  headers?: Record<string, string>;
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
    ...(job.headers ? { headers: job.headers } : {}),
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

const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
console.log(JSON.stringify(await runJob(job)));
