/** The lowdb briefing repository: runs in briefings.json, each run's send log in a file of its own under briefings/. */
import fs from 'node:fs';
import path from 'node:path';
import type { BriefingRun, Delivery } from '../../schemas/newsletter.ts';
import type { BriefingRepository } from '../types.ts';
import { JsonCollection } from './file.ts';

export type BriefingsFile = { runs: BriefingRun[] };
export type DeliveriesFile = { deliveries: Record<string, Delivery> };

/** Run ids become file names: only these characters. */
const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;

export class LowdbBriefings implements BriefingRepository {
  readonly #runs: JsonCollection<BriefingsFile>;
  readonly #dir: string;
  readonly #readOnly: boolean;
  /** Send logs opened so far (one per run; a day has one, a forced re-send adds one). */
  readonly #logs = new Map<string, Promise<JsonCollection<DeliveriesFile>>>();

  constructor(runs: JsonCollection<BriefingsFile>, dataDir: string, readOnly: boolean) {
    this.#runs = runs;
    this.#dir = path.join(dataDir, 'briefings');
    this.#readOnly = readOnly;
  }

  #log(runId: string): Promise<JsonCollection<DeliveriesFile>> {
    if (!RUN_ID.test(runId)) throw new Error(`Invalid briefing run id: ${runId}`);
    let log = this.#logs.get(runId);
    if (!log) {
      if (!this.#readOnly) fs.mkdirSync(this.#dir, { recursive: true });
      log = JsonCollection.open<DeliveriesFile>(path.join(this.#dir, `${runId}.json`), { deliveries: {} }, this.#readOnly);
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

  async deliveries(runId: string) {
    const log = await this.#log(runId);
    return new Map(Object.entries(log.data.deliveries).map(([id, d]) => [id, { ...d }]));
  }

  async recordDeliveries(runId: string, deliveries: readonly Delivery[]) {
    if (deliveries.length === 0) return;
    const log = await this.#log(runId);
    for (const delivery of deliveries) log.data.deliveries[delivery.subscriberId] = { ...delivery };
    await log.write();
  }
}
