/**
 * Who may do what (issue 14): one table of role x action, and one check that the endpoints, the
 * admin pages and the islands all ask (after Ghost's permission fixtures and Payload's access functions).
 * Pure: no store, no HTTP, so the islands import it too (the server's refusals are in src/server/permissions.ts).
 */
import type { ArticleStatus } from '../schemas/article.ts';
import type { Grant, Role, User } from '../schemas/auth.ts';

export const ACTIONS = [
  'article.create',
  /** Unpublished articles (drafts, scheduled, archived): published ones are public. */
  'article.read',
  'article.edit',
  /** Moving an article out of, or back to, draft: publish, unpublish, archive. */
  'article.publish',
  'article.schedule',
  'article.delete',
  /** The dashboard's counts over the whole archive. */
  'article.stats',
  /** Page views over time (issue 33): `own` is the figures of one's own articles only. */
  'analytics.read',
  'votes.adjust',
  'comment.moderate',
  'image.upload',
  'source.manage',
  'subscriber.manage',
  'user.manage',
  'audit.read',
  'trash.manage',
  /** The dashboard's Publishing panel (issue 33): the regeneration queue, recent renders, and Retry on a failed one. */
  'publishing.manage',
  /** Tag curation (issue 35): merging two tags, hiding a junk tag from readers. */
  'tag.manage',
  /** Members (issue 48): the list, a member's record and history, and the Overview's members and revenue figures (personal data). */
  'member.read',
  /** Comp or un-comp a member, set the plans and the member settings (comments for members only). */
  'member.manage',
] as const;
export type Action = (typeof ACTIONS)[number];

/** The one table. A missing action is "no". */
export const PERMISSIONS: Record<Role, Partial<Record<Action, Grant>>> = {
  admin: Object.fromEntries(ACTIONS.map((action) => [action, 'all'])) as Record<Action, Grant>,
  editor: {
    'article.create': 'all',
    'article.read': 'all',
    'article.edit': 'all',
    'article.publish': 'all',
    'article.schedule': 'all',
    'article.delete': 'all',
    'article.stats': 'all',
    'analytics.read': 'all',
    'votes.adjust': 'all',
    'comment.moderate': 'all',
    'image.upload': 'all',
    'trash.manage': 'all',
    'publishing.manage': 'all',
    'tag.manage': 'all',
    // The newsroom's readers and revenue are part of an editor's picture; changing what members pay is not.
    'member.read': 'all',
  },
  author: {
    'article.create': 'all',
    'article.read': 'own',
    'article.edit': 'own',
    'article.publish': 'own',
    'article.schedule': 'own',
    'article.delete': 'own',
    'analytics.read': 'own',
    'image.upload': 'all',
  },
  contributor: {
    'article.create': 'all',
    'article.read': 'own',
    // Once an editor has moved it out of draft (published, scheduled, archived) it is no longer theirs to change.
    'article.edit': 'own-draft',
    'article.delete': 'own-draft',
    'image.upload': 'all',
  },
};

/** What each action is called in a 403 message: "Your role (contributor) cannot publish articles". */
export const ACTION_TEXT: Record<Action, string> = {
  'article.create': 'create articles',
  'article.read': 'read this article',
  'article.edit': 'edit this article',
  'article.publish': 'publish or unpublish this article',
  'article.schedule': 'schedule this article',
  'article.delete': 'delete this article',
  'article.stats': 'read the newsroom statistics',
  'analytics.read': 'read the site-wide analytics',
  'votes.adjust': 'adjust likes and dislikes',
  'comment.moderate': 'moderate comments',
  'image.upload': 'upload images',
  'source.manage': 'manage news sources',
  'subscriber.manage': 'manage the newsletter',
  'user.manage': 'manage users',
  'audit.read': 'read the audit log',
  'trash.manage': 'restore or purge deleted articles',
  'publishing.manage': 'see the publishing queue or retry a failed render',
  'tag.manage': 'merge or hide tags',
  'member.read': 'read members',
  'member.manage': 'manage members, plans or member settings',
};

/** The role of a user; users stored before roles existed were all admins. */
export function roleOf(user: Pick<User, 'role'>): Role {
  return user.role ?? 'admin';
}

/** The grants of a role, as GET /api/auth/me answers them to the islands. */
export function permissionsOf(role: Role): Partial<Record<Action, Grant>> {
  return { ...PERMISSIONS[role] };
}

/** The part of an article a check looks at. Articles without `createdBy` (seeded, ingested, pre-roles) belong to nobody's "own". */
export type ArticleTarget = { createdBy?: string | undefined; status: ArticleStatus };

/**
 * The check. Without a target it answers whether the role may do the action to anything at all
 * (the endpoint gate, and whether the UI shows a button); with one, whether to that article.
 */
export function isAllowed(grants: Partial<Record<Action, Grant>>, userId: string, action: Action, target?: ArticleTarget): boolean {
  const grant = grants[action];
  if (!grant) return false;
  if (grant === 'all' || !target) return true;
  const owns = target.createdBy !== undefined && target.createdBy === userId;
  return grant === 'own' ? owns : owns && target.status === 'draft';
}

/** The server's form of the check, for a stored user. */
export function can(user: Pick<User, 'id' | 'role'>, action: Action, target?: ArticleTarget): boolean {
  return isAllowed(PERMISSIONS[roleOf(user)], user.id, action, target);
}

/** The actions a status change needs besides editing: leaving or entering draft, or scheduling. */
export function actionsForStatusChange(from: ArticleStatus | undefined, to: ArticleStatus): Action[] {
  if (to === 'scheduled') return from === 'scheduled' ? [] : ['article.schedule'];
  if ((from ?? 'draft') === to) return [];
  return ['article.publish'];
}
