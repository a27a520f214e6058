/** Accounts and sessions. */
import { z } from './zod.ts';

export const loginInputSchema = z.strictObject({
  username: z.string().trim().min(1, 'Please enter both username and password.').max(64),
  password: z.string().min(1, 'Please enter both username and password.').max(256),
});

export const userSchema = z.object({
  id: z.string(),
  username: z.string(),
  passwordHash: z.string(),
  createdAt: z.string(),
});
export type User = z.infer<typeof userSchema>;

/**
 * A non-secret cookie ("1") that says a session cookie was set: readable by scripts (the session
 * cookie is httpOnly), so islands ask GET /api/auth/me only when someone may be signed in.
 */
export const SIGNED_IN_HINT_COOKIE = 'signed_in';

/** The signed-in user as GET /api/auth/me answers it. */
export const publicUserSchema = z.object({ id: z.string(), username: z.string() });
export type PublicUser = z.infer<typeof publicUserSchema>;

export const sessionSchema = z.object({
  /** SHA-256 of the token, hex: the token itself is never stored. */
  id: z.string(),
  userId: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});
export type Session = z.infer<typeof sessionSchema>;
