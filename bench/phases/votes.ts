/** Likes and dislikes under load, each from a new visitor, and the proof that every acknowledged vote was counted. */
import type { Article } from '../../src/schemas/article.ts';
import { readCollectionDocument } from '../../src/store/lowdb/inspect.ts';
import type { ApiClient } from '../../tests/helpers/server.ts';
import { runLoad } from '../children.ts';
import type { BenchServer } from '../processes.ts';
import { record } from '../report.ts';

export async function measureVotes(
  server: BenchServer,
  admin: ApiClient,
  options: { durationS: number },
): Promise<{ check: (dataDir: string) => void }> {
  const listed = (await (await admin.get('/api/articles?pageSize=100&status=published')).json()) as Article[];
  const ids = listed.map((a) => a.id);
  const before = new Map<string, { likes: number; dislikes: number }>();
  for (const id of ids)
    before.set(id, (await (await fetch(`${server.url}/api/articles/${id}/vote`)).json()) as { likes: number; dislikes: number });
  const result = await runLoad({
    url: server.url,
    connections: 50,
    durationS: options.durationS,
    votes: { articleIds: ids, origin: server.url },
  });
  const acknowledged = result.acknowledged ?? {};
  const inFlight = result.inFlight ?? {};
  const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
  record('votes', 'like/dislike, each from a new visitor cookie', result.rps, 'votes/s', '>= 2,000', result.rps >= 2000);
  record('votes', 'latency p99', result.p99, 'ms', '<= 50', result.p99 <= 50);
  record(
    'votes',
    'acknowledged (200) / refused or failed',
    `${total(acknowledged)} / ${result.non2xx + result.errors + result.timeouts}`,
    'votes',
  );
  /**
   * Every acknowledged vote must be counted (lost = 0), and the only extra votes allowed are the
   * requests still in flight when the load generator stopped (sent, never read): the server may
   * have stored them. Anything beyond that is a miscount.
   */
  const compare = (read: (id: string) => { likes: number; dislikes: number }) => {
    let lost = 0;
    let extra = 0;
    let miscounted = 0;
    for (const id of ids) {
      const now = read(id);
      for (const kind of ['like', 'dislike'] as const) {
        const key = `${id}:${kind}`;
        const added =
          (kind === 'like' ? now.likes - before.get(id)!.likes : now.dislikes - before.get(id)!.dislikes) - (acknowledged[key] ?? 0);
        if (added < 0) lost -= added;
        else if (added <= (inFlight[key] ?? 0)) extra += added;
        else miscounted += added;
      }
    }
    return { lost, extra, miscounted };
  };
  const served = new Map<string, { likes: number; dislikes: number }>();
  for (const id of ids)
    served.set(id, (await (await fetch(`${server.url}/api/articles/${id}/vote`)).json()) as { likes: number; dislikes: number });
  const api = compare((id) => served.get(id)!);
  record(
    'votes',
    `API tallies: lost / miscounted (+${api.extra} of ${total(inFlight)} in flight at stop)`,
    `${api.lost} / ${api.miscounted}`,
    'votes',
    '0 / 0',
    api.lost === 0 && api.miscounted === 0,
  );
  // The durable check runs once the server has stopped: the votes file must hold every acknowledged vote.
  return {
    check: (dataDir: string) => {
      const file = readCollectionDocument(dataDir, 'votes') as { tallies: Record<string, { likes: number; dislikes: number }> };
      const stored = compare((id) => file.tallies[id] ?? { likes: 0, dislikes: 0 });
      record(
        'votes',
        `vote files after shutdown: lost / miscounted (+${stored.extra} in flight)`,
        `${stored.lost} / ${stored.miscounted}`,
        'votes',
        '0 / 0',
        stored.lost === 0 && stored.miscounted === 0,
      );
    },
  };
}
