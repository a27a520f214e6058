/** The server's refusals for the permission table of src/lib/permissions.ts: 401 without a user, 403 naming the role and action. */
import type { Role, User } from '../schemas/auth.ts';
import { ACTION_TEXT, can, roleOf, type Action, type ArticleTarget } from '../lib/permissions.ts';
import { AppError, unauthorized } from './errors.ts';

/** Throws 401 without a user and 403 (with a message naming the role and the action) when not allowed. */
export function assertCan(user: Pick<User, 'id' | 'role'> | undefined, action: Action, target?: ArticleTarget): void {
  if (!user) throw unauthorized();
  if (!can(user, action, target)) throw forbidden(roleOf(user), action);
}

export function forbidden(role: Role, action: Action): AppError {
  return new AppError(403, `Your role (${role}) cannot ${ACTION_TEXT[action]}`);
}
