/**
 * The reconcile over a real served folder (the regenerator with a fake `Renderer`): it checks every
 * path once in order, skips a page that fails, keeps a page that met a full disk or a store outage
 * first in line, and runs its end (the worker's re-index of every bundle) once; a step may check
 * several paths at once, and the reconcile logs its progress every tenth.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createReconcile } from '../../src/server/publishing/reconcile.ts';
import { createRegenerator } from '../../src/server/publishing/regenerator.ts';
import { ServiceUnavailableError } from '../../src/server/errors.ts';
import { collectingLog, makeTempDir } from './support.ts';

function setUp(fail: Map<string, () => Error>) {
  const clientDir = path.join(makeTempDir('meridian-reconcile-'), 'client');
  const engine = createRegenerator({
    clientDir,
    render: async (publicPath) => {
      const error = fail.get(publicPath)?.();
      if (error) throw error;
      return publicPath.startsWith('/article/gone') ? { kind: 'missing' } : { kind: 'page', body: new TextEncoder().encode(publicPath) };
    },
  });
  const logged: string[] = [];
  const checked: string[] = [];
  let failed = 0;
  let done = 0;
  let failedAtEnd: number | undefined;
  let inFlight = 0;
  let mostInFlight = 0;
  const reconcile = createReconcile({
    check: async (publicPath) => {
      checked.push(publicPath);
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return (await engine.regenerate(publicPath)).outcome;
      } finally {
        inFlight--;
      }
    },
    isDiskFull: (error) => (error as NodeJS.ErrnoException).code === 'ENOSPC',
    onFailed: () => void failed++,
    onDone: async (result) => {
      done++;
      failedAtEnd = result.failed;
    },
    log: collectingLog(logged),
  });
  return {
    clientDir,
    reconcile,
    logged,
    checked,
    counts: () => ({ failed, done }),
    failedAtEnd: () => failedAtEnd,
    mostInFlight: () => mostInFlight,
  };
}

describe('reconcile', () => {
  it('brings every path in line in order, logs a failed page and goes on, and ends once', async () => {
    const fail = new Map([['/section/world', () => new Error('the twin broke')]]);
    const { clientDir, reconcile, logged, checked, counts } = setUp(fail);
    fs.mkdirSync(path.join(clientDir, 'article', 'gone'), { recursive: true });
    fs.writeFileSync(path.join(clientDir, 'article', 'gone', 'index.html'), 'old');

    reconcile.start('a test', ['/article/gone', '/section/world', '/article/kept']);
    expect(reconcile.pending()).toBe(3);
    while (reconcile.pending() > 0) expect(await reconcile.step()).toBe('checked');
    expect(checked).toEqual(['/article/gone', '/section/world', '/article/kept']);
    expect(fs.existsSync(path.join(clientDir, 'article', 'gone'))).toBe(false);
    expect(fs.readFileSync(path.join(clientDir, 'article', 'kept', 'index.html'), 'utf8')).toBe('/article/kept');
    expect(counts()).toEqual({ failed: 1, done: 1 });
    expect(logged).toContain('[publish] reconcile /section/world failed: the twin broke');
    expect(logged.at(-1)).toMatch(/^\[publish\] reconciled 3 pages \(a test\) in [\d.]+ s: 1 written, 1 deleted, 0 unchanged$/);
    // Nothing left: a step does nothing and does not end it again.
    expect(await reconcile.step()).toBe('checked');
    expect(counts().done).toBe(1);
  });

  it('keeps a page that met a full disk or a store outage first in line, and checks it again', async () => {
    const fail = new Map<string, () => Error>([
      ['/article/a', () => Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })],
    ]);
    const { reconcile, checked, counts } = setUp(fail);
    reconcile.start('a test', ['/article/a', '/article/b']);
    expect(await reconcile.step()).toBe('no-space');
    expect(reconcile.pending()).toBe(2);

    fail.set('/article/a', () => new ServiceUnavailableError('the store is unavailable'));
    await expect(reconcile.step()).rejects.toThrow(/unavailable/);
    expect(reconcile.pending()).toBe(2);
    expect(counts().failed).toBe(1);

    fail.clear();
    while (reconcile.pending() > 0) await reconcile.step();
    expect(checked).toEqual(['/article/a', '/article/a', '/article/a', '/article/b']);
    expect(counts()).toEqual({ failed: 1, done: 1 });
  });

  it('checks several paths at once, logs its progress every tenth with the time left, and counts failures at its end', async () => {
    const fail = new Map([['/article/p7', () => new Error('the twin broke')]]);
    const { reconcile, logged, checked, failedAtEnd, mostInFlight } = setUp(fail);
    const paths = Array.from({ length: 40 }, (_, i) => `/article/p${i}`);
    reconcile.start('a deploy', paths);
    expect(reconcile.progress()).toMatchObject({ done: 0, total: 40 });
    expect(await reconcile.step(4)).toBe('checked');
    expect(mostInFlight()).toBe(4);
    expect(reconcile.pending()).toBe(36);
    expect(reconcile.progress()).toMatchObject({ done: 4, total: 40 });
    while (reconcile.pending() > 0) await reconcile.step(4);
    expect(checked).toEqual(paths);
    expect(reconcile.progress()).toBeUndefined();
    expect(failedAtEnd()).toBe(1);
    const lines = logged.filter((line) => line.startsWith('[publish] reconciling: '));
    expect(lines).toHaveLength(9);
    expect(lines[0]).toMatch(/^\[publish\] reconciling: 4\/40 pages \(10%\), about \d+ s left$/);
  });

  it('logs once when every path before a mark is checked, even past a path that waited for disk space', async () => {
    let full = true;
    const fail = new Map([['/article/p2', () => (full ? Object.assign(new Error('no space'), { code: 'ENOSPC' }) : undefined)!]]);
    const { reconcile, logged } = setUp(fail);
    const paths = Array.from({ length: 12 }, (_, i) => `/article/p${i}`);
    reconcile.start('a deploy', paths, [
      { label: 'the front pages', end: 3 },
      { label: 'the last 7 days', end: 8 },
      { label: 'nothing', end: 0 },
    ]);
    const marks = () => logged.filter((line) => / checked \(\d+ pages in [\d.]+ s\)$/.test(line));
    expect(await reconcile.step(4)).toBe('no-space');
    expect(marks()).toEqual([]);
    full = false;
    while (reconcile.pending() > 0) await reconcile.step(4);
    expect(marks()).toEqual([
      expect.stringMatching(/^\[publish\] reconciling: the front pages checked \(3 pages in [\d.]+ s\)$/),
      expect.stringMatching(/^\[publish\] reconciling: the last 7 days checked \(8 pages in [\d.]+ s\)$/),
    ]);
  });
});
