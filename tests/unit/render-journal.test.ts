/**
 * The render journal on real files: the worker's lines, the rebuild taking them over, and the plan
 * that keeps a page only when the journal's input is today's and the file is still the one written.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRenderJournal, renderJournalFileFor, takeRenderJournal } from '../../src/server/publishing/render-journal.ts';
import { ALWAYS, planRender, statOf, type PageInput } from '../../src/server/publishing/render-inputs.ts';
import { fileForPath } from '../../src/server/publishing/paths.ts';

describe('render journal', () => {
  let outDir: string;
  let clientDir: string;
  const write = (publicPath: string, html: string) => {
    const file = fileForPath(clientDir, publicPath);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, html);
    return file;
  };

  beforeEach(() => {
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-journal-'));
    clientDir = path.join(outDir, 'client');
    fs.mkdirSync(clientDir);
  });
  afterEach(() => fs.rmSync(outDir, { recursive: true, force: true }));

  it('keeps the newest entry per page, skips a torn line, and is gone once the rebuild discards it', async () => {
    const journal = createRenderJournal(clientDir);
    await journal.record('/article/a', 'input-1', write('/article/a', '<p>one</p>'));
    await journal.record('/article/a', 'input-2', write('/article/a', '<p>two, longer</p>'));
    await journal.record('/section/world', 'input-w', write('/section/world', '<p>world</p>'));
    const file = renderJournalFileFor(clientDir);
    expect(file).toBe(path.join(outDir, 'render-journal.ndjson'));
    fs.appendFileSync(file, '{"path":"/article/b","i":"x","m":1'); // a line cut short by a crash

    const taken = takeRenderJournal(clientDir);
    expect([...taken.entries.keys()].sort()).toEqual(['/article/a', '/section/world']);
    expect(taken.entries.get('/article/a')).toMatchObject({ i: 'input-2', s: '<p>two, longer</p>'.length });
    // The worker writes on into a new file meanwhile.
    expect(fs.existsSync(file)).toBe(false);
    await journal.record('/article/c', 'input-c', write('/article/c', '<p>c</p>'));
    taken.discard();
    expect(takeRenderJournal(clientDir).entries.has('/article/a')).toBe(false);
  });

  it('a rebuild that fails after taking the journal leaves it for the next one', async () => {
    const journal = createRenderJournal(clientDir);
    await journal.record('/article/a', 'input-1', write('/article/a', '<p>one</p>'));
    takeRenderJournal(clientDir); // no discard: the rebuild died before writing its state
    await journal.record('/article/b', 'input-b', write('/article/b', '<p>b</p>'));
    const next = takeRenderJournal(clientDir);
    expect([...next.entries.keys()].sort()).toEqual(['/article/a', '/article/b']);
    next.discard();
    expect(fs.readdirSync(outDir).filter((name) => name.startsWith('render-journal'))).toEqual([]);
  });

  it('compacts to one line per page as it grows', async () => {
    const journal = createRenderJournal(clientDir);
    const file = write('/article/a', '<p>same</p>');
    // Each line is ~90 bytes: 15,000 records of two pages pass the 1 MB mark and compact.
    for (let n = 0; n < 15_000; n++) await journal.record(n % 2 ? '/article/a' : '/section/world', `input-${n}`, file);
    expect(fs.statSync(renderJournalFileFor(clientDir)).size).toBeLessThan(1 << 20);
    const entries = takeRenderJournal(clientDir).entries;
    expect(entries.get('/article/a')?.i).toBe('input-14999');
    expect(entries.get('/section/world')?.i).toBe('input-14998');
  });

  it('planRender keeps a page only when the journal has its input and the file it wrote', async () => {
    const journal = createRenderJournal(clientDir);
    await journal.record('/article/kept', 'now', write('/article/kept', '<p>kept</p>'));
    await journal.record('/article/old-input', 'before', write('/article/old-input', '<p>old</p>'));
    await journal.record('/article/edited', 'now', write('/article/edited', '<p>edited</p>'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    write('/article/edited', '<p>changed by hand after the worker wrote it</p>');
    await journal.record('/article/gone', 'now', write('/article/gone', '<p>gone</p>'));
    fs.rmSync(fileForPath(clientDir, '/article/gone'));
    write('/article/untouched', '<p>as the last rebuild left it</p>');
    const inputs = new Map<string, PageInput>([
      ['/article/kept', { i: 'now' }],
      ['/article/old-input', { i: 'now' }],
      ['/article/edited', { i: 'now' }],
      ['/article/gone', { i: 'now' }],
      ['/article/untouched', { i: 'same' }],
      ['/rss.xml', { i: ALWAYS }],
    ]);
    const previous = {
      '/article/untouched': { i: 'same', ...statOf(clientDir, '/article/untouched')! },
      '/article/kept': { i: 'older', m: 1, s: 1 },
    };
    const plan = planRender(inputs, previous, [], clientDir, takeRenderJournal(clientDir).entries);
    expect(plan.adopt).toEqual(['/article/kept']);
    expect(plan.render.sort()).toEqual(['/article/edited', '/article/gone', '/article/old-input', '/rss.xml']);
    expect(plan.remove).toEqual([]);
  });
});
