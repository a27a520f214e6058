/** The first admin's generated password reaches a person once, and never the log (issue 30: no secret in a log). */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareDataDir, INITIAL_PASSWORD_FILE } from '../../src/server/boot.ts';
import { parseConfig } from '../../src/config.ts';
import { closeQuietly, collectingLog, makeRuntime } from './support.ts';
import type { Runtime } from '../../src/server/runtime.ts';

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await closeQuietly(runtime.store);
});

async function runtimeWithoutPassword(): Promise<{ runtime: Runtime; lines: string[] }> {
  const runtime = await makeRuntime();
  runtimes.push(runtime);
  runtime.config = parseConfig({ DATA_DIR: runtime.config.DATA_DIR, SEED: 'none', DATABASE_URL: runtime.config.DATABASE_URL });
  const lines: string[] = [];
  runtime.log = collectingLog(lines);
  return { runtime, lines };
}

describe('the first admin without ADMIN_PASSWORD', () => {
  it('puts a generated password in DATA_DIR/initial-admin-password (0600) when no terminal reads stderr, never in the log', async () => {
    const { runtime, lines } = await runtimeWithoutPassword();
    await prepareDataDir(runtime, { isTty: false });
    const file = path.join(path.resolve(runtime.config.DATA_DIR), INITIAL_PASSWORD_FILE);
    const password = /^password: (\S+)$/m.exec(fs.readFileSync(file, 'utf8'))![1]!;
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).toContain(`its generated password is in ${file}`);
    expect(lines.join('\n')).not.toContain(password);
    expect(await runtime.store.users.count()).toBe(1);
  });

  it('in production creates no admin with a made-up password, and says how to add one', async () => {
    const { runtime, lines } = await runtimeWithoutPassword();
    await prepareDataDir(runtime, { production: true, isTty: false });
    expect(await runtime.store.users.count()).toBe(0);
    expect(fs.existsSync(path.join(path.resolve(runtime.config.DATA_DIR), INITIAL_PASSWORD_FILE))).toBe(false);
    expect(lines.join('\n')).toContain('npm run user -- add NAME');
  });
});
