/**
 * The CDN purge hook's sender against a real local HTTP endpoint that hangs, fails, then recovers:
 * send() never waits, one request at a time, failed paths retried with what changed meanwhile,
 * given up after the last retry, and the failures logged once a minute.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createPurger, type PurgeBody } from '../../src/server/publishing/purge.ts';
import { collectingLog } from './support.ts';

type Mode = 'hang' | 'fail' | 'ok' | 'refuse';

let endpoint: http.Server | undefined;

afterEach(async () => {
  endpoint?.closeAllConnections();
  await new Promise((resolve) => endpoint?.close(resolve) ?? resolve(undefined));
  endpoint = undefined;
});

/** A purge endpoint whose answer the test switches; it records every body and the most requests open at once. */
async function startEndpoint(): Promise<{
  url: string;
  setMode(mode: Mode): void;
  bodies: PurgeBody[];
  received: PurgeBody[];
  maxOpen(): number;
}> {
  let mode: Mode = 'hang';
  let open = 0;
  let maxOpen = 0;
  const bodies: PurgeBody[] = [];
  const received: PurgeBody[] = [];
  endpoint = http.createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    res.on('close', () => open--);
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as PurgeBody;
      bodies.push(body);
      if (mode === 'hang') return;
      if (mode === 'fail') return void res.writeHead(502).end();
      if (mode === 'refuse') return void res.writeHead(403).end();
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => endpoint!.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/purge`,
    setMode: (next) => (mode = next),
    bodies,
    received,
    maxOpen: () => maxOpen,
  };
}

describe('the purge hook', () => {
  it('never waits, holds one request at a time, and retries what a hanging endpoint missed once it answers', async () => {
    const hook = await startEndpoint();
    const lines: string[] = [];
    const purger = createPurger({
      url: hook.url,
      siteUrl: 'https://news.example',
      log: collectingLog(lines),
      timeoutMs: 300,
      retryDelaysMs: [200, 400, 400],
    });
    // Nothing to wait for: send() answers at once (no promise), while the endpoint holds the request.
    expect(purger.send(['/article/one', '/section/world'])).toBeUndefined();
    purger.send(['/article/two']);
    purger.send(['/article/one']);

    // Hanging: cut at the timeout, retried after 200 ms with the paths changed meanwhile.
    await expect.poll(() => hook.bodies.length, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(2);
    expect(hook.bodies[0]!.paths).toEqual(['/article/one', '/section/world']);
    expect(hook.bodies[1]!.paths).toEqual(['/article/one', '/section/world', '/article/two']);
    expect(hook.bodies[1]!.urls).toContain('https://news.example/article/two');

    hook.setMode('ok');
    await expect.poll(() => hook.received.length, { timeout: 5000, interval: 20 }).toBe(1);
    expect(hook.received[0]!.paths).toEqual(['/article/one', '/section/world', '/article/two']);
    // The endpoint counts the request before its answer reaches the purger: wait for the purger to read it.
    await expect.poll(() => purger.pending(), { timeout: 5000, interval: 20 }).toBe(0);
    await expect
      .poll(() => lines.some((l) => /^\[publish\] purge hook answers again after \d+ failed tries/.test(l)), {
        timeout: 5000,
        interval: 20,
      })
      .toBe(true);
    expect(hook.maxOpen()).toBe(1);
    expect(lines.filter((l) => l.startsWith('[publish] purge hook failed for'))).toHaveLength(1);
    expect(lines.find((l) => l.startsWith('[publish] purge hook failed for'))).toMatch(/no answer within 0\.3 s.*next try in 0\.2 s/);

    // Sent at once again now that it answers.
    purger.send(['/article/three']);
    await expect.poll(() => hook.received.length, { timeout: 5000, interval: 20 }).toBe(2);
    expect(hook.received[1]!.paths).toEqual(['/article/three']);
    await purger.stop();
  });

  it('gives up after the last retry and says so; a refusal (4xx) is not retried', async () => {
    const hook = await startEndpoint();
    hook.setMode('fail');
    const lines: string[] = [];
    const purger = createPurger({
      url: hook.url,
      siteUrl: 'https://news.example',
      log: collectingLog(lines),
      timeoutMs: 300,
      retryDelaysMs: [50, 50],
    });
    purger.send(['/article/lost']);
    await expect.poll(() => lines.some((l) => l.includes('path(s) given up')), { timeout: 5000, interval: 20 }).toBe(true);
    expect(hook.bodies).toHaveLength(3);
    expect(lines.find((l) => l.includes('given up'))).toMatch(/failed 3 times \(it answered HTTP 502\): 1 path\(s\) given up/);
    expect(purger.pending()).toBe(0);

    hook.setMode('refuse');
    purger.send(['/article/refused']);
    await expect.poll(() => lines.some((l) => l.includes('refused 1 path(s)')), { timeout: 5000, interval: 20 }).toBe(true);
    expect(hook.bodies).toHaveLength(4);
    // Nothing waits for a retry, and no later request (the next send's, the last try at stop) carries it.
    expect(purger.pending()).toBe(0);

    // At stop, one last try of what waits; what the endpoint still did not take is told.
    hook.setMode('hang');
    purger.send(['/article/at-stop']);
    const stopping = performance.now();
    await purger.stop();
    expect(performance.now() - stopping).toBeLessThan(5000);
    expect(lines.at(-1)).toBe('[publish] purge hook: 1 path(s) not sent before the server stopped');
    expect(hook.bodies.length).toBeGreaterThan(4);
    expect(hook.bodies.slice(4).flatMap((body) => body.paths)).not.toContain('/article/refused');
  });
});
