/** The audit log's domain half: record an entry (any subsystem may) and page through it, newest first. */
import { randomUUID } from 'node:crypto';
import type { AuditAction, AuditEntry } from '../schemas/audit.ts';
import type { User } from '../schemas/auth.ts';
import type { Runtime } from './runtime.ts';
import { nowIso } from './clock.ts';
import { maskEmail } from './log.ts';
import { isStorageFault } from './storage-faults.ts';

/** Who did it: a user (only id and username are kept), or null for the system. */
export type AuditActor = Pick<User, 'id' | 'username'> | null;

export type AuditRecordInput = {
  actor: AuditActor;
  action: AuditAction;
  target: AuditEntry['target'];
  detail?: string | undefined;
};

/**
 * Appends one entry to the audit log; resolves once it is on disk. Every caller records a change that
 * is already stored: when a full disk refuses the entry, the change stands (answering 503 would say
 * it was not saved), the entry's log line says `stored: false`, and the fault is reported as any other.
 */
export async function recordAudit(runtime: Runtime, input: AuditRecordInput): Promise<AuditEntry> {
  const entry: AuditEntry = {
    id: randomUUID(),
    at: nowIso(),
    actor: input.actor ? { id: input.actor.id, username: input.actor.username } : null,
    action: input.action,
    target: input.target,
    ...(input.detail ? { detail: input.detail } : {}),
  };
  let stored = true;
  try {
    await runtime.store.audit.append(entry);
  } catch (error) {
    if (!isStorageFault(error)) throw error;
    stored = false;
  }
  // Every audited event (publishing, role changes, disabled users, password resets) is a log line too.
  const who = entry.actor?.username ?? 'system';
  const label = entry.target.label === undefined ? undefined : maskEmails(entry.target.label);
  runtime.log[stored ? 'info' : 'warn'](
    {
      component: 'audit',
      event: entry.action,
      actor: who,
      ...(entry.actor ? { actorId: entry.actor.id } : {}),
      target: { type: entry.target.type, id: entry.target.id, ...(label === undefined ? {} : { label }) },
      ...(entry.detail ? { detail: maskEmails(entry.detail) } : {}),
      ...(stored ? {} : { stored: false }),
    },
    `[audit] ${who}: ${entry.action} ${entry.target.type} ${label ?? entry.target.id}${entry.detail ? ` (${maskEmails(entry.detail)})` : ''}` +
      (stored ? '' : ' (not stored in the audit log: storage is full)'),
  );
  return entry;
}

/** Any e-mail address in a label or detail masked (`j***@example.com`): a commenter's name may be one. */
function maskEmails(text: string): string {
  return text.replace(/[^\s@<>()"',;]+@[^\s@<>()"',;]+\.[^\s@<>()"',;]+/g, (address) => maskEmail(address));
}

/** One page of the log, newest first. */
export async function listAudit(
  runtime: Runtime,
  query: { page: number; pageSize: number },
): Promise<{ items: AuditEntry[]; total: number; page: number; pageSize: number }> {
  const { items, total } = await runtime.store.audit.list({ offset: (query.page - 1) * query.pageSize, limit: query.pageSize });
  return { items, total, page: query.page, pageSize: query.pageSize };
}
