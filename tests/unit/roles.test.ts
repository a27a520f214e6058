/** Roles (issue 14): the permission table and its one check, users stored before roles, the audit log's append-only segments. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { ACTIONS, actionsForStatusChange, can, isAllowed, PERMISSIONS, permissionsOf, roleOf } from '../../src/lib/permissions.ts';
import { toPublicUser } from '../../src/server/auth.ts';
import { recordAudit, listAudit } from '../../src/server/audit.ts';
import { ROLES } from '../../src/schemas/auth.ts';
import { closeQuietly, makeRuntime, makeTempDir } from './support.ts';

const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await closeQuietly(store);
});

describe('the permission table', () => {
  it('gives admins every action, and nobody but admins users, sources, subscribers, members to change or the audit log', () => {
    for (const action of ACTIONS) expect(PERMISSIONS.admin[action], action).toBe('all');
    for (const role of ROLES.filter((r) => r !== 'admin')) {
      for (const action of ['user.manage', 'source.manage', 'subscriber.manage', 'audit.read', 'member.manage'] as const)
        expect(PERMISSIONS[role][action], `${role} ${action}`).toBeUndefined();
    }
  });

  it('lets editors read members (personal data) and nobody below them', () => {
    expect(can({ id: 'e', role: 'editor' }, 'member.read')).toBe(true);
    for (const role of ['author', 'contributor'] as const) expect(can({ id: 'x', role }, 'member.read'), role).toBe(false);
  });

  it('answers per article: editors everything, authors their own, contributors their own drafts', () => {
    const mine = { createdBy: 'u1', status: 'draft' as const };
    const minePublished = { createdBy: 'u1', status: 'published' as const };
    const theirs = { createdBy: 'u2', status: 'draft' as const };
    const legacy = { status: 'draft' as const };
    const user = (role: (typeof ROLES)[number]) => ({ id: 'u1', role });
    expect(can(user('editor'), 'article.delete', theirs)).toBe(true);
    expect(can(user('editor'), 'article.edit', legacy)).toBe(true);
    expect(can(user('author'), 'article.publish', mine)).toBe(true);
    expect(can(user('author'), 'article.edit', theirs)).toBe(false);
    expect(can(user('author'), 'article.edit', legacy)).toBe(false);
    expect(can(user('contributor'), 'article.edit', mine)).toBe(true);
    expect(can(user('contributor'), 'article.edit', minePublished)).toBe(false);
    expect(can(user('contributor'), 'article.delete', minePublished)).toBe(false);
    expect(can(user('contributor'), 'article.publish', mine)).toBe(false);
    expect(can(user('contributor'), 'article.schedule', mine)).toBe(false);
    // The islands ask the same check over /api/auth/me's grants.
    expect(isAllowed(permissionsOf('author'), 'u1', 'article.delete', mine)).toBe(can(user('author'), 'article.delete', mine));
  });

  it('names the extra action a status change needs', () => {
    expect(actionsForStatusChange(undefined, 'draft')).toEqual([]);
    expect(actionsForStatusChange('draft', 'published')).toEqual(['article.publish']);
    expect(actionsForStatusChange('published', 'archived')).toEqual(['article.publish']);
    expect(actionsForStatusChange('draft', 'scheduled')).toEqual(['article.schedule']);
    expect(actionsForStatusChange('published', 'published')).toEqual([]);
  });

  it('reads a user stored before roles existed as an admin', async () => {
    const dir = makeTempDir();
    fs.writeFileSync(
      path.join(dir, 'users.json'),
      JSON.stringify({ users: [{ id: 'old', username: 'veteran', passwordHash: 'x', createdAt: '2025-01-01T00:00:00.000Z' }] }),
    );
    const store = await openStore(dir);
    open.push(store);
    const user = (await store.users.get('old'))!;
    expect(roleOf(user)).toBe('admin');
    expect(toPublicUser(user)).toMatchObject({ username: 'veteran', role: 'admin', permissions: { 'user.manage': 'all' } });
    expect(can(user, 'audit.read')).toBe(true);
  });
});

describe('the audit log store', () => {
  it('appends one line per entry to a monthly segment and pages newest first across segments', async () => {
    const runtime = await makeRuntime(undefined, 'lowdb');
    open.push(runtime.store);
    const actor = { id: 'a1', username: 'ann' };
    for (let i = 0; i < 5; i++) await recordAudit(runtime, { actor, action: 'article.publish', target: { type: 'article', id: `x${i}` } });
    const dir = path.join(runtime.dataDir, 'audit');
    const [segment] = fs.readdirSync(dir);
    expect(segment).toMatch(/^\d{4}-\d{2}\.jsonl$/);
    const before = fs.readFileSync(path.join(dir, segment!), 'utf8');
    expect(before.trim().split('\n')).toHaveLength(5);
    // An older month's segment: read after the newer one.
    fs.writeFileSync(
      path.join(dir, '2020-01.jsonl'),
      `${JSON.stringify({ id: 'old', at: '2020-01-05T00:00:00.000Z', actor: null, action: 'source.add', target: { type: 'source', id: 's' } })}\n`,
    );
    await recordAudit(runtime, { actor, action: 'article.delete', target: { type: 'article', id: 'x5' } });
    // Appending never rewrote what was there.
    expect(fs.readFileSync(path.join(dir, segment!), 'utf8').startsWith(before)).toBe(true);

    await runtime.store.close();
    open.pop();
    const reopened = await makeRuntime(runtime.dataDir, 'lowdb');
    open.push(reopened.store);
    const first = await listAudit(reopened, { page: 1, pageSize: 4 });
    expect(first.total).toBe(7);
    expect(first.items.map((e) => e.target.id)).toEqual(['x5', 'x4', 'x3', 'x2']);
    const second = await listAudit(reopened, { page: 2, pageSize: 4 });
    expect(second.items.map((e) => e.target.id)).toEqual(['x1', 'x0', 's']);
  });

  it('skips a torn last line (a crash mid-append) instead of failing to open', async () => {
    const dir = makeTempDir();
    fs.mkdirSync(path.join(dir, 'audit'));
    const good = JSON.stringify({
      id: 'g',
      at: '2026-01-01T00:00:00.000Z',
      actor: null,
      action: 'article.publish',
      target: { type: 'article', id: 'a' },
    });
    fs.writeFileSync(path.join(dir, 'audit', '2026-01.jsonl'), `${good}\n{"id":"torn","at":"2026-01-0`);
    const runtime = await makeRuntime(dir, 'lowdb');
    open.push(runtime.store);
    expect((await listAudit(runtime, { page: 1, pageSize: 10 })).items.map((e) => e.id)).toEqual(['g']);
    // The next entry starts a line of its own, so it is not lost to the torn one.
    const next = await recordAudit(runtime, { actor: null, action: 'article.publish', target: { type: 'article', id: 'b' } });
    const name = `${next.at.slice(0, 7)}.jsonl`;
    if (name === '2026-01.jsonl')
      expect((await listAudit(runtime, { page: 1, pageSize: 10 })).items.map((e) => e.id)).toEqual([next.id, 'g']);
    fs.appendFileSync(path.join(dir, 'audit', name), '{"torn":');
    const after = await recordAudit(runtime, { actor: null, action: 'article.delete', target: { type: 'article', id: 'c' } });
    expect((await listAudit(runtime, { page: 1, pageSize: 1 })).items[0]!.id).toBe(after.id);
  });
});
