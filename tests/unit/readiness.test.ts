/** checkReadiness's reasons, in the order a load balancer meets them: draining, the store, the served folder. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReadiness } from '../../src/server/readiness.ts';
import { makeRuntime, makeTempDir } from './support.ts';

/** A served folder with the files a complete build has. */
function completeFolder(): string {
  const dir = makeTempDir('meridian-served-');
  fs.mkdirSync(path.join(dir, 'section/world'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'section/world/index.html'), '<p>world</p>');
  fs.writeFileSync(path.join(dir, '404.html'), '<p>404</p>');
  fs.mkdirSync(path.join(dir, '_astro'));
  return dir;
}

describe('checkReadiness', () => {
  it('is ready with a reachable store and a complete served folder, and says why not otherwise', async () => {
    const runtime = await makeRuntime();
    expect(await checkReadiness(runtime)).toMatchObject({ ready: false, reason: 'starting: the server does not listen yet' });
    runtime.servedDir = completeFolder();
    const ready = await checkReadiness(runtime);
    expect(ready).toMatchObject({ ready: true, queue: 0, store: runtime.store.kind });
    expect(ready.reason).toBeUndefined();

    fs.rmSync(path.join(runtime.servedDir, '404.html'));
    expect((await checkReadiness(runtime)).reason).toMatch(/^served folder incomplete: 404\.html missing/);

    runtime.draining = true;
    expect(await checkReadiness(runtime)).toMatchObject({ ready: false, reason: 'draining: the server is stopping' });

    runtime.draining = false;
    await runtime.store.close();
    expect(await checkReadiness(runtime)).toMatchObject({ ready: false, reason: 'store: the store is closed', queue: null });
  });

  it('reports a degraded state (a full disk) until its probe finds the fault gone, and tells who waits', async () => {
    const runtime = await makeRuntime();
    runtime.servedDir = completeFolder();
    let full = true;
    let probes = 0;
    const cleared: string[] = [];
    runtime.health.onClear((key) => cleared.push(key));
    runtime.health.set('disk:data', 'data folder storage is full (ENOSPC): changes are refused', {
      probe: async () => {
        probes++;
        return !full;
      },
      probeEveryMs: 20,
    });
    const degraded = await checkReadiness(runtime);
    expect(degraded).toMatchObject({ ready: false, reason: 'data folder storage is full (ENOSPC): changes are refused' });
    expect(degraded.degraded).toEqual([{ key: 'disk:data', message: expect.any(String), since: expect.any(String) }]);
    // Probes that found the fault still there (the first two answered, the third asked) leave it set.
    await expect.poll(() => probes, { timeout: 5000, interval: 10 }).toBeGreaterThanOrEqual(3);
    expect((await checkReadiness(runtime)).ready).toBe(false);
    full = false;
    for (let i = 0; i < 100 && runtime.health.has('disk:data'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cleared).toEqual(['disk:data']);
    const ready = await checkReadiness(runtime);
    expect(ready.ready).toBe(true);
    expect(ready.degraded).toBeUndefined();
    runtime.health.close();
    await runtime.store.close();
  });

  it('finds a lowdb folder whose layout is not the one this version reads', async () => {
    const runtime = await makeRuntime(makeTempDir(), 'lowdb');
    runtime.servedDir = completeFolder();
    fs.writeFileSync(path.join(runtime.dataDir, 'store.json'), JSON.stringify({ layout: 99 }));
    expect((await checkReadiness(runtime)).reason).toBe('store: the data folder has layout 99, this version reads 2');
    await runtime.store.close();
  });
});
