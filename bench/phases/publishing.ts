/** Publish and update -> the article and its section page live, against the full build time. */
import type { Article } from '../../src/schemas/article.ts';
import type { ApiClient } from '../../tests/helpers/server.ts';
import { pageText, waitUntil, type BenchServer } from '../processes.ts';
import { quantile, record } from '../report.ts';

export async function measurePublishing(
  server: BenchServer,
  admin: ApiClient,
  runs: number,
  buildMs: number,
  heroImage: string | undefined,
): Promise<void> {
  const times: number[] = [];
  const apiTimes: number[] = [];
  const body = `<p>${'The council met again on Thursday to weigh the proposal and hear from residents. '.repeat(60)}</p>`;
  let failed = 0;
  for (let round = 0; round < runs / 2; round++) {
    const section = (['world', 'business', 'politics', 'tech'] as const)[round % 4];
    const title = `Bench live story ${round} ${Date.now()}`;
    const t0 = performance.now();
    const created = await admin.post('/api/articles', { title, bodyHtml: body, section, status: 'published', tags: ['bench'], heroImage });
    if (created.status !== 201) throw new Error(`publish failed: ${created.status} ${await created.text()}`);
    apiTimes.push(performance.now() - t0);
    const article = (await created.json()) as Article;
    const live = async (expect: string) =>
      waitUntil(30_000, async () => {
        const [page, listing] = await Promise.all([
          pageText(`${server.url}/article/${article.slug}`),
          pageText(`${server.url}/section/${section}`),
        ]);
        return page.status === 200 && page.text.includes(expect) && listing.text.includes(expect);
      });
    if (await live(title)) times.push(performance.now() - t0);
    else failed++;

    const newTitle = `${title} updated`;
    const t1 = performance.now();
    const updated = await admin.put(`/api/articles/${article.id}`, { title: newTitle });
    if (updated.status !== 200) throw new Error(`update failed: ${updated.status}`);
    apiTimes.push(performance.now() - t1);
    if (await live(newTitle)) times.push(performance.now() - t1);
    else failed++;
  }
  const p50 = quantile(times, 0.5);
  const p95 = quantile(times, 0.95);
  record('publish', `publish/update -> article + section page live, p50 (${times.length} runs)`, Math.round(p50), 'ms');
  record('publish', 'publish/update -> live, p95', Math.round(p95), 'ms', '<= 1,000', p95 <= 1000 && failed === 0);
  record('publish', 'API call alone, p50 / p95', `${Math.round(quantile(apiTimes, 0.5))} / ${Math.round(quantile(apiTimes, 0.95))}`, 'ms');
  const share = (p95 / buildMs) * 100;
  record('publish', 'live p95 as a share of the full build', Number(share.toFixed(2)), '%', '<= 1%', share <= 1);
  if (failed) record('publish', 'runs not live within 30 s', failed, 'runs', '0', false);
}
