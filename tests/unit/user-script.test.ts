/** scripts/user.ts: adding and resetting admins from the command line, and refusing while the server holds DATA_DIR. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { verifyPassword } from '../../src/server/auth.ts';
import { makeTempDir } from './support.ts';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/user.ts');

function runUser(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], {
    env: { ...process.env, DATA_DIR: dataDir, USER_PASSWORD: '', ...env },
    encoding: 'utf8',
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

async function passwordHashOf(dataDir: string, username: string): Promise<string> {
  const store = await openStore(dataDir, 'read');
  const user = await store.users.getByUsername(username);
  await store.close();
  return user!.passwordHash;
}

describe('npm run user', () => {
  it('adds a user with a generated password printed once, then resets it from --password or USER_PASSWORD', async () => {
    const dir = makeTempDir();
    const added = runUser(dir, ['add', 'editor']);
    expect(added.code, added.err).toBe(0);
    const generated = /password: (\S+)/.exec(added.out)?.[1];
    expect(generated).toMatch(/^[a-z2-7]{5}(-[a-z2-7]{5}){3}$/);
    expect(await verifyPassword(await passwordHashOf(dir, 'editor'), generated!)).toBe(true);

    const duplicate = runUser(dir, ['add', 'editor']);
    expect(duplicate.code).toBe(1);
    expect(duplicate.err).toMatch(/already exists/);

    const reset = runUser(dir, ['reset', 'editor', '--password', 'a-brand-new-password']);
    expect(reset.code, reset.err).toBe(0);
    expect(reset.out).not.toMatch(/password:/);
    expect(await verifyPassword(await passwordHashOf(dir, 'editor'), 'a-brand-new-password')).toBe(true);

    const fromEnv = runUser(dir, ['reset', 'editor'], { USER_PASSWORD: 'password-from-env' });
    expect(fromEnv.code, fromEnv.err).toBe(0);
    expect(await verifyPassword(await passwordHashOf(dir, 'editor'), 'password-from-env')).toBe(true);
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
  });

  it('adds a user with --role (issue 14), refuses an unknown role, and a reset keeps the role', async () => {
    const dir = makeTempDir();
    const added = runUser(dir, ['add', 'rita', '--role', 'editor', '--password', 'rita-password-1']);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toMatch(/Created editor "rita"/);
    const roleOf = async (name: string) => {
      const store = await openStore(dir, 'read');
      const user = await store.users.getByUsername(name);
      await store.close();
      return user?.role;
    };
    expect(await roleOf('rita')).toBe('editor');
    expect(runUser(dir, ['reset', 'rita', '--password', 'another-password']).code).toBe(0);
    expect(await roleOf('rita')).toBe('editor');
    const bad = runUser(dir, ['add', 'x', '--role', 'overlord']);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/Unknown role "overlord"/);
    expect(runUser(dir, ['add', 'admin2', '--password', 'admin2-password']).out).toMatch(/Created admin/);
    expect(await roleOf('admin2')).toBe('admin');
  });

  it('explains bad usage, unknown users and short passwords', () => {
    const dir = makeTempDir();
    expect(runUser(dir, []).err).toMatch(/Usage/);
    expect(runUser(dir, ['remove', 'x']).code).toBe(1);
    const unknown = runUser(dir, ['reset', 'ghost']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No user "ghost"/);
    const short = runUser(dir, ['add', 'shorty', '--password', 'short']);
    expect(short.code).toBe(1);
    expect(short.err).toMatch(/at least 8/);
  });

  it('refuses with exit code 2 while another process holds DATA_DIR', async () => {
    const dir = makeTempDir();
    const { spawn } = await import('node:child_process');
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      // A live process's pid in the lock file is what a running server leaves there.
      fs.writeFileSync(path.join(dir, '.lock'), String(holder.pid));
      const result = runUser(dir, ['add', 'editor', '--password', 'long-enough-password']);
      expect(result.code).toBe(2);
      expect(result.err).toMatch(/Cannot change users while the data folder is in use/);
      expect(result.err).toContain(`pid ${holder.pid}`);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
