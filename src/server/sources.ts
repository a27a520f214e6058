/** News sources: the RSS feeds (and future API sources) an editor subscribes to. */
import { randomUUID } from 'node:crypto';
import type { NewsSource, NewsSourceInput } from '../schemas/source.ts';
import type { Runtime } from './runtime.ts';
import { conflict, notFound } from './errors.ts';
import { nowIso } from './clock.ts';
import { recordAudit, type AuditActor } from './audit.ts';

export async function listSources(runtime: Runtime): Promise<NewsSource[]> {
  return runtime.store.sources.list();
}

export async function createSource(runtime: Runtime, input: NewsSourceInput, actor?: AuditActor): Promise<NewsSource> {
  const existing = await runtime.store.sources.list();
  if (existing.some((s) => s.url === input.url)) throw conflict('A news source with this URL already exists');
  const source: NewsSource = { id: randomUUID(), ...input, createdAt: nowIso() };
  await runtime.store.sources.insert(source);
  if (actor !== undefined)
    await recordAudit(runtime, {
      actor,
      action: 'source.add',
      target: { type: 'source', id: source.id, label: source.name },
      detail: source.url,
    });
  return source;
}

export async function setSourceEnabled(runtime: Runtime, id: string, enabled: boolean): Promise<NewsSource> {
  const updated = await runtime.store.sources.update(id, { enabled });
  if (!updated) throw notFound('News source');
  return updated;
}

export async function deleteSource(runtime: Runtime, id: string, actor?: AuditActor): Promise<void> {
  const before = await runtime.store.sources.get(id);
  if (!(await runtime.store.sources.delete(id))) throw notFound('News source');
  if (actor !== undefined)
    await recordAudit(runtime, {
      actor,
      action: 'source.remove',
      target: { type: 'source', id, label: before?.name },
      detail: before?.url,
    });
}
