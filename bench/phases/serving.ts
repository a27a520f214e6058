/** Reader serving: (a) the static file from our server, (b) the same page rendered per request, (c) nginx serving the same file. */
import type { LoadJob } from '../load.ts';
import { runLoad } from '../children.ts';
import { findNginx, pageText, startNginx, type BenchServer } from '../processes.ts';
import { record, say } from '../report.ts';

export async function measureServing(
  server: BenchServer,
  slug: string,
  options: { durationS: number },
  clientDir: string,
  imagesDir: string,
  workDir: string,
): Promise<void> {
  const page = `/article/${slug}`;
  const twin = `${server.ssrUrl}${page}`;
  const staticPage = await pageText(`${server.url}${page}`);
  const twinResponse = await fetch(twin);
  const twinText = await twinResponse.text();
  if (staticPage.status !== 200 || twinResponse.status !== 200 || !twinText.includes('</html>'))
    throw new Error(`cannot serve ${page}: static ${staticPage.status}, twin ${twinResponse.status}`);
  say(
    `serving ${page} (${staticPage.text.length.toLocaleString('en-US')} bytes static, ${twinText.length.toLocaleString('en-US')} bytes from the twin)`,
  );
  const job = (url: string, extra: Partial<LoadJob> = {}): LoadJob => ({ url, connections: 50, durationS: options.durationS, ...extra });
  const warm = (j: LoadJob) => runLoad({ ...j, durationS: 2 });

  await warm(job(`${server.url}${page}`));
  const a = await runLoad(job(`${server.url}${page}`));
  record('serving', '(a) static article page, our server', a.rps, 'req/s');
  record('serving', '(a) latency p50 / p99', `${a.p50} / ${a.p99}`, 'ms');
  await warm(job(twin));
  const b = await runLoad(job(twin));
  record('serving', '(b) same page rendered per request (twin)', b.rps, 'req/s');
  record('serving', '(b) latency p50 / p99', `${b.p50} / ${b.p99}`, 'ms');
  const ab = a.rps / b.rps;
  record('serving', 'ratio a/b', Number(ab.toFixed(2)), 'x', '>= 6', ab >= 6);
  const failures = a.non2xx + a.errors + b.non2xx + b.errors;
  if (failures) say(`WARNING: ${failures} failed or non-2xx answers during (a)/(b)`);

  const nginx = findNginx();
  if (!nginx) {
    record('serving', '(c) nginx, same file', 'skipped', '', 'nginx not installed: apt-get install -y nginx');
    return;
  }
  // One worker per core is how nginx ships; one worker is the like-for-like figure beside our one Node process.
  const gzipHeaders = { 'accept-encoding': 'gzip' };
  await warm(job(`${server.url}${page}`, { headers: gzipHeaders }));
  const agz = await runLoad(job(`${server.url}${page}`, { headers: gzipHeaders }));
  record('serving', '(a-gz) static article page, our server, Accept-Encoding: gzip (its .gz twin)', agz.rps, 'req/s');
  for (const workers of ['auto', 1] as const) {
    const proxy = await startNginx(nginx, clientDir, imagesDir, workDir, workers);
    try {
      const check = await pageText(`${proxy.url}${page}`);
      if (check.status !== 200 || check.text.length !== staticPage.text.length)
        throw new Error(`nginx answers ${check.status} with ${check.text.length} bytes for ${page}`);
      await warm(job(`${proxy.url}${page}`));
      const c = await runLoad(job(`${proxy.url}${page}`));
      const tag = workers === 'auto' ? '(c)' : '(c1)';
      record('serving', `${tag} nginx, same file (${proxy.workers})`, c.rps, 'req/s');
      record('serving', `${tag} latency p50 / p99`, `${c.p50} / ${c.p99}`, 'ms');
      const ac = a.rps / c.rps;
      if (workers === 'auto') record('serving', 'ratio a/c', Number(ac.toFixed(2)), 'x', '>= 0.5', ac >= 0.5);
      else record('serving', 'ratio a/c1 (nginx with one worker, for reference)', Number(ac.toFixed(2)), 'x');
      if (workers === 'auto') {
        const cgz = await runLoad(job(`${proxy.url}${page}`, { headers: gzipHeaders }));
        record('serving', '(c-gz) nginx, same .gz twin (gzip_static)', cgz.rps, 'req/s');
        record('serving', 'ratio a-gz/c-gz', Number((agz.rps / cgz.rps).toFixed(2)), 'x');
      }
    } finally {
      await proxy.stop();
    }
  }
}
