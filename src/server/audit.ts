/** The audit log's domain half: record an entry (any subsystem may) and page through it, newest first. */
import { randomUUID } from 'node:crypto';
import type { AuditAction, AuditEntry } from '../schemas/audit.ts';
import type { User } from '../schemas/auth.ts';
import type { Runtime } from './runtime.ts';
import { nowIso } from './clock.ts';

/** Who did it: a user (only id and username are kept), or null for the system. */
export type AuditActor = Pick<User, 'id' | 'username'> | null;

export type AuditRecordInput = {
  actor: AuditActor;
  action: AuditAction;
  target: AuditEntry['target'];
  detail?: string | undefined;
};

/** Appends one entry to the audit log; resolves once it is on disk. */
export async function recordAudit(runtime: Runtime, input: AuditRecordInput): Promise<AuditEntry> {
  const entry: AuditEntry = {
    id: randomUUID(),
    at: nowIso(),
    actor: input.actor ? { id: input.actor.id, username: input.actor.username } : null,
    action: input.action,
    target: input.target,
    ...(input.detail ? { detail: input.detail } : {}),
  };
  await runtime.store.audit.append(entry);
  return entry;
}

/** One page of the log, newest first. */
export async function listAudit(
  runtime: Runtime,
  query: { page: number; pageSize: number },
): Promise<{ items: AuditEntry[]; total: number; page: number; pageSize: number }> {
  const { items, total } = await runtime.store.audit.list({ offset: (query.page - 1) * query.pageSize, limit: query.pageSize });
  return { items, total, page: query.page, pageSize: query.pageSize };
}
