/**
 * The writes of bench:scale's burst, in a process of their own (the editors and voters, who would be
 * on other machines): two editors saving article bodies back to back, two streams of votes from new
 * visitors, and a feed ingestion at the start and a third of the way through. Reads one job as JSON
 * from argv, writes for `durationS` seconds, prints one JSON line with what it wrote.
 */
import { ApiClient } from '../tests/helpers/server.ts';

export type BurstJob = {
  origin: string;
  admin: { username: string; password: string };
  /** Articles the editors save in turn. */
  articleIds: string[];
  /** Articles the votes go to. */
  voteIds: string[];
  /** A news source whose feed has new items on every fetch. */
  sourceId: string;
  durationS: number;
  /** Saves and votes a second over the whole burst (each stream its share, on a schedule); absent: back to back. */
  rate?: { savesPerS: number; votesPerS: number };
};

export type BurstResult = { saves: number; votes: number; ingestions: number; failed: number };

const BODY = `<p>${'The council met again on Thursday to weigh the proposal and hear from residents who had waited for hours. '.repeat(60)}</p>`;

/** A distinct visitor id per n, in the cookie's alphabet (26 base32 characters). */
const prefix = Math.random()
  .toString(36)
  .replace(/[^a-z]/g, '')
  .padEnd(8, 'q')
  .slice(0, 8);
function visitorId(n: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let tail = '';
  for (let rest = n; tail.length < 18; rest = Math.floor(rest / 32)) tail += alphabet[rest % 32];
  return `${prefix}${tail}`;
}

async function runBurst(job: BurstJob): Promise<BurstResult> {
  const admin = new ApiClient(job.origin);
  await admin.login(job.admin.username, job.admin.password);
  const result: BurstResult = { saves: 0, votes: 0, ingestions: 0, failed: 0 };
  const start = performance.now();
  const end = start + job.durationS * 1000;
  /** Waits for the n-th write's turn at `perS` a second (no wait back to back); false once the burst is over. */
  const turn = async (n: number, perS: number | undefined) => {
    const at = perS ? start + (n * 1000) / perS : performance.now();
    if (at > performance.now()) await new Promise((resolve) => setTimeout(resolve, at - performance.now()));
    return performance.now() < end;
  };
  const count = (status: number, key: 'saves' | 'votes' | 'ingestions') => {
    if (status >= 200 && status < 300) result[key]++;
    else result.failed++;
  };
  let edit = 0;
  const saves = async (offset: number) => {
    for (let i = offset; await turn(i, job.rate?.savesPerS); i += 2) {
      const id = job.articleIds[(i * 7) % job.articleIds.length]!;
      const response = await admin.put(`/api/articles/${id}`, { bodyHtml: `${BODY}<p>Burst edit ${edit++}.</p>` });
      await response.text();
      count(response.status, 'saves');
    }
  };
  let voter = 0;
  const votes = async () => {
    for (let n = voter++; await turn(n, job.rate?.votesPerS); n = voter++) {
      const response = await fetch(`${job.origin}/api/articles/${job.voteIds[n % job.voteIds.length]}/like`, {
        method: 'POST',
        headers: { Origin: job.origin, Cookie: `vid=${visitorId(n)}` },
      });
      await response.text();
      count(response.status, 'votes');
    }
  };
  const ingest = async () => {
    for (let n = 0; n < 2 && performance.now() < end; n++) {
      const response = await admin.post(`/api/news-sources/${job.sourceId}/fetch`);
      await response.text();
      count(response.status, 'ingestions');
      await new Promise((resolve) => setTimeout(resolve, job.durationS * 300));
    }
  };
  await Promise.all([saves(0), saves(1), votes(), votes(), ingest()]);
  return result;
}

const job = JSON.parse(process.argv[2] ?? '{}') as BurstJob;
console.log(JSON.stringify(await runBurst(job)));
