/**
 * The lowdb briefing repository: runs in briefings.json, and each run's send log as an append-only
 * JSON-lines file under briefings/, so recording a recipient costs one short append, not a rewrite.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BriefingRun, Delivery } from '../../schemas/newsletter.ts';
import type { BriefingRepository } from '../types.ts';
import type { JsonCollection } from './file.ts';
import { gated } from './write-gate.ts';

export type BriefingsFile = { runs: BriefingRun[] };

/** Run ids become file names: only these characters. */
const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;

type SendLog = {
  /** Latest state per subscriber. */
  deliveries: Map<string, Delivery>;
  /** Appends run one after another, in call order. */
  tail: Promise<void>;
  /** The file ends in the middle of a line (a crash tore the last append): the next append starts a new line. */
  torn: boolean;
};

/** Reads a send log: one JSON delivery per line, the last line for a subscriber wins; a torn line is skipped. */
function readSendLog(file: string): SendLog {
  const deliveries = new Map<string, Delivery>();
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const delivery = JSON.parse(line) as Delivery;
      if (typeof delivery.subscriberId === 'string') deliveries.set(delivery.subscriberId, delivery);
    } catch {
      // A line cut short by a crash: its send never started (an `attempting` line is on disk before
      // the SMTP transaction) or its `sent` mark is lost (the recipient stays `attempting`, never resent).
    }
  }
  return { deliveries, tail: Promise.resolve(), torn: text.length > 0 && !text.endsWith('\n') };
}

export class LowdbBriefings implements BriefingRepository {
  readonly #runs: JsonCollection<BriefingsFile>;
  readonly #dir: string;
  readonly #readOnly: boolean;
  readonly #logs = new Map<string, SendLog>();

  constructor(runs: JsonCollection<BriefingsFile>, dataDir: string, readOnly: boolean) {
    this.#runs = runs;
    this.#dir = path.join(dataDir, 'briefings');
    this.#readOnly = readOnly;
  }

  #file(runId: string): string {
    if (!RUN_ID.test(runId)) throw new Error(`Invalid briefing run id: ${runId}`);
    return path.join(this.#dir, `${runId}.jsonl`);
  }

  #log(runId: string): SendLog {
    let log = this.#logs.get(runId);
    if (!log) {
      log = readSendLog(this.#file(runId));
      this.#logs.set(runId, log);
    }
    return log;
  }

  async runsFor(date: string) {
    return this.#runs.data.runs.filter((r) => r.date === date).map((r) => ({ ...r }));
  }

  async latest() {
    const runs = this.#runs.data.runs;
    const last = runs[runs.length - 1];
    return last && { ...last };
  }

  async saveRun(run: BriefingRun) {
    const runs = this.#runs.data.runs;
    const index = runs.findIndex((r) => r.id === run.id);
    if (index >= 0) runs[index] = { ...run };
    else runs.push({ ...run });
    await this.#runs.write();
  }

  /** No await between the check and the push: one step in this process (the only one on the folder). */
  async startRun(run: BriefingRun) {
    if (this.#runs.data.runs.some((r) => r.id === run.id)) return false;
    this.#runs.data.runs.push({ ...run });
    await this.#runs.write();
    return true;
  }

  /** Claims in flight (their `attempting` line not yet on disk), so two claims at once cannot both pass. */
  readonly #claiming = new Set<string>();

  async claimDelivery(runId: string, subscriberId: string, at: string) {
    const key = `${runId}\n${subscriberId}`;
    const logged = this.#log(runId).deliveries.get(subscriberId);
    if (this.#claiming.has(key) || (logged && !(logged.state === 'failed' && logged.retry === true))) return false;
    this.#claiming.add(key);
    try {
      await this.recordDeliveries(runId, [{ subscriberId, state: 'attempting', at }]);
    } finally {
      this.#claiming.delete(key);
    }
    return true;
  }

  async deliveries(runId: string) {
    return new Map([...this.#log(runId).deliveries].map(([id, d]) => [id, { ...d }]));
  }

  /**
   * Appends the deliveries to the run's log. An `attempting` record is flushed to disk (fsync)
   * before this resolves: it is what keeps a message from going out twice after a power loss too.
   */
  recordDeliveries(runId: string, deliveries: readonly Delivery[]): Promise<void> {
    if (this.#readOnly) return Promise.reject(new Error('The store was opened read-only'));
    if (deliveries.length === 0) return Promise.resolve();
    const file = this.#file(runId);
    const log = this.#log(runId);
    const lines = deliveries.map((d) => JSON.stringify(d) + '\n').join('');
    const sync = deliveries.some((d) => d.state === 'attempting');
    const append = log.tail.then(() =>
      gated(file, async () => {
        await fs.promises.mkdir(this.#dir, { recursive: true });
        const handle = await fs.promises.open(file, 'a');
        try {
          const { size } = await handle.stat();
          try {
            await handle.appendFile((log.torn ? '\n' : '') + lines);
            if (sync) await handle.sync();
          } catch (error) {
            // A full disk: the lines that got in part way are cut off again; the claim was not made.
            await handle.truncate(size).catch(() => {});
            throw error;
          }
        } finally {
          await handle.close();
        }
        log.torn = false;
        for (const d of deliveries) log.deliveries.set(d.subscriberId, { ...d });
      }),
    );
    log.tail = append.catch(() => {});
    return append;
  }
}
