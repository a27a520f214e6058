/** A real Prometheus (Debian's package) scrapes the server's METRICS_PORT; after a publish its query API reads the figures back. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type TestServer } from '../helpers/server.ts';
import { freePort } from '../../scripts/server-process.ts';
import { adminClient, createArticle, startApiServer, waitFor, waitForIdleQueue } from './support.ts';

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';

let server: TestServer;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;
let prometheusOutput = '';

beforeAll(async () => {
  server = await startApiServer({ METRICS_PORT: '0' });
  const target = /Metrics on http:\/\/([^\s"/]+)\/metrics/.exec(server.output())![1]!;
  const dir = makeDataDir('meridian-prometheus-');
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      'scrape_configs:',
      '  - job_name: meridian',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout!.on('data', (chunk: Buffer) => (prometheusOutput += chunk.toString()));
  prometheus.stderr!.on('data', (chunk: Buffer) => (prometheusOutput += chunk.toString()));
  await waitFor(
    () => `Prometheus to be ready:\n${prometheusOutput}`,
    async () => (await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined))?.ok,
    30_000,
  );
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await server?.stop();
});

/** The value of an instant query's first series, once it has one (undefined until then). */
async function queryValue(expression: string): Promise<number | undefined> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expression)}`);
  const body = (await response.json()) as {
    status: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  expect(body.status).toBe('success');
  const first = body.data.result[0];
  return first ? Number(first.value[1]) : undefined;
}

/** Waits until Prometheus has scraped a value of `expression` that passes `ok`. */
async function scraped(expression: string, ok: (value: number) => boolean): Promise<number> {
  let last: number | undefined;
  const found = await waitFor(
    () => `${expression} in Prometheus (last value ${last}):\n${prometheusOutput}`,
    // Wrapped: a value of 0 is an answer too.
    async () => {
      last = await queryValue(expression);
      return last !== undefined && ok(last) ? { value: last } : undefined;
    },
    30_000,
  );
  return found.value;
}

describe('Prometheus scraping the server', () => {
  it('reads pages rendered, requests by route, queue depth and store latency after a publish', async () => {
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'Metrics are scraped', status: 'published', section: 'world' });
    expect((await admin.get(`/api/articles/${article.id}`)).status).toBe(200);
    await waitForIdleQueue(server.url);
    expect(await scraped('up{job="meridian"}', (v) => v === 1)).toBe(1);
    await scraped('sum(meridian_pages_rendered_total{outcome="written"})', (v) => v > 0);
    await scraped('meridian_page_render_duration_seconds_count', (v) => v > 0);
    // The bounded route label: Astro's route pattern, never the raw URL.
    await scraped('sum(http_request_duration_seconds_count{route="/api/articles",method="POST",status="201"})', (v) => v >= 1);
    await scraped('sum(http_request_duration_seconds_count{route="/api/auth/login",method="POST",status="200"})', (v) => v >= 1);
    await scraped('sum(http_request_duration_seconds_count{route="/api/articles/[id]",method="GET",status="200"})', (v) => v >= 1);
    expect(await queryValue(`count(http_request_duration_seconds_count{route="/api/articles/${article.id}"})`)).toBeUndefined();
    await scraped('meridian_regeneration_queue_depth', (v) => v === 0);
    await scraped('sum(meridian_store_operation_duration_seconds_count{repository="articles",operation="insert"})', (v) => v >= 1);
    await scraped('nodejs_eventloop_lag_seconds', (v) => v >= 0);
    await scraped('process_resident_memory_bytes', (v) => v > 0);
  }, 90_000);

  it('keeps /metrics off the main server when no METRICS_TOKEN is set', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { headers: { Authorization: 'Bearer anything-at-all-here' } })).status).toBe(404);
  });
});
