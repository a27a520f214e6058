/** The Users tab's domain (issue 14): add users with a role, change roles, disable, reset passwords, delete. */
import type { User, UserCreate, UserSummary, UserUpdate } from '../schemas/auth.ts';
import type { Runtime } from './runtime.ts';
import { AppError, conflict, notFound } from './errors.ts';
import { generatePassword, upsertUser } from './auth.ts';
import { recordAudit, type AuditActor } from './audit.ts';
import { roleOf } from '../lib/permissions.ts';

export function toUserSummary(user: User): UserSummary {
  return { id: user.id, username: user.username, role: roleOf(user), disabled: user.disabled === true, createdAt: user.createdAt };
}

export async function listUsers(runtime: Runtime): Promise<UserSummary[]> {
  return (await runtime.store.users.list()).map(toUserSummary);
}

/** Creates a user; answers the password too when it was generated (shown once, never stored in clear). */
export async function createUser(
  runtime: Runtime,
  input: UserCreate,
  actor: AuditActor,
): Promise<{ user: UserSummary; password?: string }> {
  if (await runtime.store.users.getByUsername(input.username)) throw conflict(`A user named "${input.username}" already exists`);
  const password = input.password ?? generatePassword();
  const user = await upsertUser(runtime, input.username, password, input.role);
  await recordAudit(runtime, {
    actor,
    action: 'user.create',
    target: { type: 'user', id: user.id, label: user.username },
    detail: `role ${input.role}`,
  });
  return input.password === undefined ? { user: toUserSummary(user), password } : { user: toUserSummary(user) };
}

const isActiveAdmin = (user: User) => roleOf(user) === 'admin' && !user.disabled;

/** Refuses a change that would leave no active admin (nobody could then manage users). */
async function assertAnotherActiveAdmin(runtime: Runtime, target: User, what: string): Promise<void> {
  if (!isActiveAdmin(target)) return;
  const others = (await runtime.store.users.list()).filter((u) => u.id !== target.id && isActiveAdmin(u));
  if (others.length === 0) throw conflict(`Cannot ${what} the last active admin: make another user admin first`);
}

/** Changes a role, disables or re-enables, or resets the password; answers the new password when reset. */
export async function updateUser(
  runtime: Runtime,
  id: string,
  change: UserUpdate,
  actor: AuditActor,
): Promise<{ user: UserSummary; password?: string }> {
  const before = await runtime.store.users.get(id);
  if (!before) throw notFound('User');
  const roleChanges = change.role !== undefined && change.role !== roleOf(before);
  const disabledChanges = change.disabled !== undefined && change.disabled !== (before.disabled === true);
  if (roleChanges && change.role !== 'admin') await assertAnotherActiveAdmin(runtime, before, 'demote');
  if (disabledChanges && change.disabled) await assertAnotherActiveAdmin(runtime, before, 'disable');

  let password: string | undefined;
  let after = before;
  if (roleChanges || disabledChanges) {
    after = (await runtime.store.users.update(id, {
      ...(roleChanges ? { role: change.role } : {}),
      ...(disabledChanges ? { disabled: change.disabled ? true : undefined } : {}),
    }))!;
  }
  // A disabled user is signed out at once; a role change takes effect on their next request anyway.
  if (disabledChanges && change.disabled) await runtime.store.sessions.deleteForUser(id);
  if (change.resetPassword) {
    password = generatePassword();
    after = await upsertUser(runtime, before.username, password);
  }
  const target = { type: 'user' as const, id, label: before.username };
  if (roleChanges) await recordAudit(runtime, { actor, action: 'user.role', target, detail: `${roleOf(before)} -> ${change.role}` });
  if (disabledChanges) await recordAudit(runtime, { actor, action: change.disabled ? 'user.disable' : 'user.enable', target });
  if (password) await recordAudit(runtime, { actor, action: 'user.password-reset', target });
  return password ? { user: toUserSummary(after), password } : { user: toUserSummary(after) };
}

export async function deleteUser(runtime: Runtime, id: string, actor: AuditActor): Promise<void> {
  const user = await runtime.store.users.get(id);
  if (!user) throw notFound('User');
  if (actor && actor.id === id) throw new AppError(409, 'You cannot delete your own account');
  await assertAnotherActiveAdmin(runtime, user, 'delete');
  await runtime.store.sessions.deleteForUser(id);
  await runtime.store.users.delete(id);
  await recordAudit(runtime, { actor, action: 'user.delete', target: { type: 'user', id, label: user.username } });
}
