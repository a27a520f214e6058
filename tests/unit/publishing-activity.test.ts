/** The worker's activity log for the Publishing panel: running jobs per lane, the bounded ring of recent renders, error messages. */
import { describe, expect, it } from 'vitest';
import { createActivityLog, describeJobError, RECENT_RENDERS } from '../../src/server/publishing/activity.ts';

const T0 = Date.parse('2026-05-01T12:00:00.000Z');

describe('the activity log', () => {
  it('shows a job as running from begin to end, per lane', () => {
    let now = T0;
    const log = createActivityLog(RECENT_RENDERS, () => now);
    const endPage = log.begin('pages', '/article/a');
    now += 500;
    const endSearch = log.begin('search', '/pagefind/head-2026-05-01');
    expect(log.read().renderingNow).toEqual([{ path: '/article/a', since: '2026-05-01T12:00:00.000Z' }]);
    expect(log.read().searchBuilding).toEqual({ path: '/pagefind/head-2026-05-01', since: '2026-05-01T12:00:00.500Z' });
    endPage();
    expect(log.read().renderingNow).toEqual([]);
    endSearch();
    expect(log.read().searchBuilding).toBeUndefined();
  });

  it('keeps the last renders newest first, no more than its capacity', () => {
    let now = T0;
    const log = createActivityLog(3, () => now);
    for (const [i, outcome] of (['written', 'unchanged', 'deleted', 'absent', 'written'] as const).entries()) {
      now = T0 + i * 1000;
      log.notePage(`/p/${i}`, outcome, 12.345);
    }
    expect(log.read().recent).toEqual([
      { path: '/p/4', outcome: 'written', at: '2026-05-01T12:00:04.000Z', ms: 12.3 },
      // A missing page with no file to remove: nothing changed on disk.
      { path: '/p/3', outcome: 'unchanged', at: '2026-05-01T12:00:03.000Z', ms: 12.3 },
      { path: '/p/2', outcome: 'deleted', at: '2026-05-01T12:00:02.000Z', ms: 12.3 },
    ]);
  });

  it('remembers the last search build', () => {
    const log = createActivityLog(RECENT_RENDERS, () => T0);
    expect(log.read().lastSearch).toBeUndefined();
    log.noteSearch(812.7);
    expect(log.read().lastSearch).toEqual({ at: '2026-05-01T12:00:00.000Z', ms: 813 });
  });
});

describe('a job error as the panel shows it', () => {
  it('cuts the served folder out of file paths', () => {
    const error = Object.assign(new Error("ENOTDIR: not a directory, open '/srv/meridian/client/article/x/index.html'"), {
      code: 'ENOTDIR',
    });
    expect(describeJobError(error, '/srv/meridian/client/')).toBe("ENOTDIR: not a directory, open '/article/x/index.html'");
    expect(describeJobError('plain text', '/srv/meridian/client')).toBe('plain text');
  });
});
