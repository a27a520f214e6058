/**
 * The render journal: which pages the server's worker wrote, from which input and with which stat,
 * kept beside the render state (OUT_DIR/render-journal.ndjson, one JSON line per page written).
 *
 * `npm run rebuild` renders a page again when its file no longer has the stat its last rebuild saw,
 * since anything may have changed it. A page the worker rewrote is the common case: the journal lets
 * the rebuild take such a page as it is when the worker wrote it from the input the data has now and
 * the file still has the stat the worker saw (at 10,000 articles, 275 pages the server had rewritten
 * were half of the one-change rebuild). An entry that does not match is only ignored, so a lost,
 * torn or stale journal costs a render, never a stale page.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

const entrySchema = z.object({ path: z.string(), i: z.string(), m: z.number(), s: z.number() });
export type JournalEntry = z.infer<typeof entrySchema>;

/** Compaction starts once the file holds this much and twice what its last compaction left. */
const MIN_COMPACT_BYTES = 1 << 20;

export function renderJournalFileFor(clientDir: string): string {
  return path.join(path.dirname(path.resolve(clientDir)), 'render-journal.ndjson');
}

/** The newest entry of each path in the journal's text; lines that do not parse (a torn last line) are skipped. */
function parseJournal(text: string): Map<string, JournalEntry> {
  const entries = new Map<string, JournalEntry>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const entry = entrySchema.safeParse(parsed);
    if (entry.success) entries.set(entry.data.path, entry.data);
  }
  return entries;
}

/** The worker's side: one line per page written; compacts to one line per page as the file grows. */
export function createRenderJournal(clientDir: string): { record: (publicPath: string, input: string, file: string) => Promise<void> } {
  const file = renderJournalFileFor(clientDir);
  let size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  let compactAt = Math.max(MIN_COMPACT_BYTES, size * 2);
  return {
    async record(publicPath, input, written) {
      const stat = await fsp.stat(written);
      const line = `${JSON.stringify({ path: publicPath, i: input, m: stat.mtimeMs, s: stat.size } satisfies JournalEntry)}\n`;
      await fsp.appendFile(file, line);
      size += line.length;
      if (size < compactAt) return;
      // A rebuild may take the file meanwhile; then this rewrites entries it already read, which match or are ignored.
      const entries = parseJournal(await fsp.readFile(file, 'utf8').catch(() => ''));
      const text = [...entries.values()].map((entry) => `${JSON.stringify(entry)}\n`).join('');
      const temp = `${file}.${process.pid}.tmp`;
      await fsp.writeFile(temp, text);
      await fsp.rename(temp, file);
      size = text.length;
      compactAt = Math.max(MIN_COMPACT_BYTES, size * 2);
    },
  };
}

/**
 * The rebuild's side: takes the journal over (renamed away, so the worker starts a new one) and reads
 * the newest entry per page. `discard` removes the taken file once the render state that absorbed it
 * is written; a rebuild that fails before leaves it, and the next rebuild reads it again.
 */
export function takeRenderJournal(clientDir: string): { entries: Map<string, JournalEntry>; discard: () => void } {
  const file = renderJournalFileFor(clientDir);
  const taken = `${file}.taken`;
  let text = '';
  try {
    // A journal a failed rebuild took first, then whatever the worker wrote since.
    text = fs.readFileSync(taken, 'utf8');
  } catch {
    // none
  }
  try {
    const renamed = `${taken}.${process.pid}`;
    fs.renameSync(file, renamed);
    text += fs.readFileSync(renamed, 'utf8');
    fs.writeFileSync(taken, text);
    fs.rmSync(renamed, { force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return { entries: parseJournal(text), discard: () => fs.rmSync(taken, { force: true }) };
}
