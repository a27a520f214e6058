/** Readers' sessions (issue 48): the staff design (random token in the cookie, SHA-256 stored, sliding 30 days) with `kind: 'member'`. */
import type { Session } from '../../schemas/auth.ts';
import type { Member } from '../../schemas/member.ts';
import type { Runtime } from '../runtime.ts';
import { createSession, findLiveSession, forgetSession, slideSession } from '../auth.ts';

export const MEMBER_SESSION_COOKIE = 'member_session';

/** A new session for a member; the caller sets the cookie. */
export function createMemberSession(runtime: Runtime, memberId: string): Promise<{ token: string; session: Session }> {
  return createSession(runtime, memberId, 'member');
}

/**
 * The member and session behind a token, extending the session past half its life. A staff session's
 * token answers nothing here (as a member token does in the staff check): the two never stand in for each other.
 */
export async function validateMemberSessionToken(
  runtime: Runtime,
  token: string,
): Promise<{ session: Session; member: Member; renewed: boolean } | undefined> {
  const found = await findLiveSession(runtime, token);
  if (!found || found.kind !== 'member') return undefined;
  const member = await runtime.store.members.get(found.userId);
  // Deleting an account deletes its sessions; this covers one made in the same instant.
  if (!member) {
    await forgetSession(runtime, found.id);
    return undefined;
  }
  const { session, renewed } = await slideSession(runtime, found);
  return { session, member, renewed };
}

export async function invalidateMemberSession(runtime: Runtime, sessionId: string): Promise<void> {
  await runtime.store.sessions.delete(sessionId);
}

/** Signs a member out everywhere (their account is deleted). */
export async function invalidateMemberSessions(runtime: Runtime, memberId: string): Promise<void> {
  await runtime.store.sessions.deleteForUser(memberId);
}
