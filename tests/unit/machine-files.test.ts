/**
 * Feeds, sitemaps, robots.txt and pages.json drawn by the render thread: byte for byte what the
 * loopback renderer wrote for the same archive (the fixtures in tests/fixtures/machine-files/ were
 * written by it before it went), a month without articles is missing, an unknown path is an error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { startRenderThread, type RenderThread } from '../../src/server/publishing/render-thread.ts';
import { createSiteRenderer } from '../../src/server/publishing/service.ts';
import type { Renderer } from '../../src/server/publishing/worker.ts';
import { MACHINE_FILES, MISSING_FILES, NOW, SITE_NAME, SITE_URL, seedMachineFileArchive } from '../fixtures/machine-files/seed.ts';
import { ROOT } from '../helpers/server.ts';
import { makeTempDir } from './support.ts';

const FIXTURES = path.join(ROOT, 'tests/fixtures/machine-files');
const serverEntry = path.resolve(ROOT, process.env.OUT_DIR ?? 'dist', 'server/entry.mjs');

describe('machine files through the render thread', () => {
  let thread: RenderThread;
  let render: Renderer;

  beforeAll(async () => {
    const dataDir = makeTempDir('meridian-machine-files-');
    const store = await openStore(dataDir, 'write');
    await seedMachineFileArchive(store);
    await store.close();
    // Read by this process's store and config, and copied into the render thread's environment when it starts.
    Object.assign(process.env, { DATA_DIR: dataDir, SITE_URL, SITE_NAME, SEED: 'none' });
    delete process.env.DATABASE_URL;
    // The news sitemap is drawn at the fixtures' moment, not the test's (only the clock is faked, not timers).
    vi.useFakeTimers({ toFake: ['Date'], now: NOW });
    thread = startRenderThread(serverEntry);
    render = createSiteRenderer(thread);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await thread.close();
  });

  it.each(MACHINE_FILES)('%s is byte-identical to what the loopback renderer wrote', async (publicPath, fixture) => {
    const outcome = await render(publicPath);
    expect(outcome.kind).toBe('page');
    const body = Buffer.from(outcome.kind === 'page' ? outcome.body : new Uint8Array());
    expect(body.toString('utf8')).toBe(fs.readFileSync(path.join(FIXTURES, fixture), 'utf8'));
    expect(body.equals(fs.readFileSync(path.join(FIXTURES, fixture)))).toBe(true);
  });

  it('answers "missing" for a month without articles, and fails a path no twin draws instead of deleting it', async () => {
    for (const publicPath of MISSING_FILES) expect(await render(publicPath)).toEqual({ kind: 'missing' });
    await expect(render('/sitemaps/not-a-month.txt')).rejects.toThrow(/no render twin draws/);
  });

  it('a twin refuses data of another kind (a misrouted file fails, it is never written)', async () => {
    await expect(thread.render('/robots.txt', { route: 'file', props: { kind: 'sitemap-index', periods: [] } })).rejects.toThrow(
      /answered HTTP 404/,
    );
  });
});
