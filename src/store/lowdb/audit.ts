/**
 * The audit log on disk: append-only JSON Lines segments, one per month (DATA_DIR/audit/2026-11.jsonl).
 * A write appends one line and fsyncs; nothing written is ever rewritten, so no document grows per write.
 */
import fs from 'node:fs';
import path from 'node:path';
import { auditEntrySchema, type AuditEntry } from '../../schemas/audit.ts';
import type { AuditRepository, Page } from '../types.ts';
import { gated } from './write-gate.ts';

const SEGMENT = /^\d{4}-\d{2}\.jsonl$/;

/** Parses a segment's lines; a torn last line (a crash mid-append) is skipped, not fatal. */
function parseSegment(text: string): AuditEntry[] {
  const out: AuditEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = auditEntrySchema.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // An incomplete line: the append it belonged to never resolved, so no caller was told it was saved.
    }
  }
  return out;
}

export class LowdbAudit implements AuditRepository {
  readonly #dir: string;
  readonly #readOnly: boolean;
  /** Entries per segment, counted once at open and kept up to date by append: the total without rereading. */
  readonly #counts = new Map<string, number>();
  /** Appends run one after another so lines never interleave. */
  #tail: Promise<void> = Promise.resolve();

  private constructor(dir: string, readOnly: boolean) {
    this.#dir = dir;
    this.#readOnly = readOnly;
  }

  static async open(dataDir: string, readOnly: boolean): Promise<LowdbAudit> {
    const audit = new LowdbAudit(path.join(dataDir, 'audit'), readOnly);
    for (const name of await audit.#segments()) {
      audit.#counts.set(name, parseSegment(await fs.promises.readFile(path.join(audit.#dir, name), 'utf8')).length);
    }
    return audit;
  }

  /** Segment file names, newest first. */
  async #segments(): Promise<string[]> {
    try {
      return (await fs.promises.readdir(this.#dir))
        .filter((n) => SEGMENT.test(n))
        .sort()
        .reverse();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  append(entry: AuditEntry): Promise<void> {
    if (this.#readOnly) return Promise.reject(new Error('The store was opened read-only'));
    const line = `${JSON.stringify(auditEntrySchema.parse(entry))}\n`;
    const name = `${entry.at.slice(0, 7)}.jsonl`;
    const file = path.join(this.#dir, name);
    const run = this.#tail.then(() => gated(file, () => this.#appendLine(file, name, line)));
    this.#tail = run.catch(() => {});
    return run;
  }

  async #appendLine(file: string, name: string, line: string): Promise<void> {
    await fs.promises.mkdir(this.#dir, { recursive: true });
    const handle = await fs.promises.open(file, 'a+');
    try {
      // After a torn last line (a crash mid-append), start a fresh line so this entry is not glued to it.
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      try {
        // appendFile writes until every byte is in (a bare write may stop short on a nearly full disk).
        await handle.appendFile(size > 0 && last[0] !== 0x0a ? `\n${line}` : line);
        await handle.datasync();
      } catch (error) {
        // A full disk: the part of the line that got in is cut off again, so the segment ends as it did.
        await handle.truncate(size).catch(() => {});
        throw error;
      }
    } finally {
      await handle.close();
    }
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
  }

  /** Resolves once every append made so far is on disk (the store's close waits for it). */
  settled(): Promise<void> {
    return this.#tail;
  }

  async list(page: Page) {
    await this.#tail;
    const total = [...this.#counts.values()].reduce((a, b) => a + b, 0);
    const items: AuditEntry[] = [];
    let skip = page.offset;
    // Only the newest segments a page reaches are read.
    for (const name of await this.#segments()) {
      if (items.length >= page.limit) break;
      const count = this.#counts.get(name) ?? 0;
      if (skip >= count) {
        skip -= count;
        continue;
      }
      const entries = parseSegment(await fs.promises.readFile(path.join(this.#dir, name), 'utf8')).reverse();
      for (const entry of entries.slice(skip)) {
        if (items.length >= page.limit) break;
        items.push(entry);
      }
      skip = 0;
    }
    return { items, total };
  }
}
