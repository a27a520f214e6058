/** Accounts and sessions. */
import { z } from './zod.ts';

export const loginInputSchema = z.strictObject({
  username: z.string().trim().min(1, 'Please enter both username and password.').max(64),
  password: z.string().min(1, 'Please enter both username and password.').max(256),
});

/** Newsroom roles (issue 14), most to least powerful; what each may do is the table in src/server/permissions.ts. */
export const ROLES = ['admin', 'editor', 'author', 'contributor'] as const;
export const roleSchema = z.enum(ROLES, { error: `Expected a role: ${ROLES.join(', ')}` });
export type Role = z.infer<typeof roleSchema>;

export const usernameSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'A username is 1 to 64 letters, digits, dots, dashes or underscores');

export const userSchema = z.object({
  id: z.string(),
  username: z.string(),
  passwordHash: z.string(),
  createdAt: z.string(),
  /** Absent on users stored before roles existed: they were all admins, and read as admin. */
  role: roleSchema.optional(),
  /** A disabled user cannot sign in and has no sessions. */
  disabled: z.boolean().optional(),
});
export type User = z.infer<typeof userSchema>;

/** A grant: every record, only the user's own, or only their own drafts; absent = not allowed. */
export type Grant = 'all' | 'own' | 'own-draft';

/** The signed-in user as GET /api/auth/me answers it, with what their role may do (the UI asks this). */
export const publicUserSchema = z.object({
  id: z.string(),
  username: z.string(),
  role: roleSchema,
  permissions: z.record(z.string(), z.enum(['all', 'own', 'own-draft'])),
});
export type PublicUser = z.infer<typeof publicUserSchema>;

/** A user as GET /api/users lists it (never the password hash). */
export type UserSummary = { id: string; username: string; role: Role; disabled: boolean; createdAt: string };

/** POST /api/users */
export const userCreateSchema = z.strictObject({
  username: usernameSchema,
  role: roleSchema,
  password: z.string().min(8, 'Passwords need at least 8 characters').max(256).optional(),
});
export type UserCreate = z.infer<typeof userCreateSchema>;

/** PUT /api/users/{id}: a role change, disabling or re-enabling, and/or a password reset. */
export const userUpdateSchema = z
  .strictObject({
    role: roleSchema.optional(),
    disabled: z.boolean().optional(),
    /** true: generate a new password and answer it once; it also signs the user out everywhere. */
    resetPassword: z.literal(true).optional(),
  })
  .refine(
    (u) => u.role !== undefined || u.disabled !== undefined || u.resetPassword !== undefined,
    'Nothing to change: send role, disabled or resetPassword',
  );
export type UserUpdate = z.infer<typeof userUpdateSchema>;

export const sessionSchema = z.object({
  /** SHA-256 of the token, hex: the token itself is never stored. */
  id: z.string(),
  userId: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
  /** `member`: a reader's session (issue 48), whose userId names a member; absent: a staff session. */
  kind: z.literal('member').optional(),
});
export type Session = z.infer<typeof sessionSchema>;
