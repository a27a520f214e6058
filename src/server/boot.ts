/** Starting the application in a process: open the store, fill an empty DATA_DIR, create the first admin, start services. */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { ensureFirstAdmin } from './auth.ts';
import type { Logger, RequestScope } from './log.ts';
import { startRuntime } from './app.ts';
import type { Runtime } from './runtime.ts';
import { startBackgroundServices } from './services.ts';

/** Where a generated first-admin password goes when no terminal is there to show it (a service, a container). */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

export type FirstAdminOutput = {
  /** Production mode: no admin with a made-up password; without ADMIN_PASSWORD the log says how to add one. @default false */
  production?: boolean;
  /** Whether a person reads stderr (then the generated password is shown there, once). @default process.stderr.isTTY */
  isTty?: boolean;
};

/**
 * Seeds an empty DATA_DIR (SEED=demo) and creates the first admin. A generated password never goes
 * to the log (a journal keeps it for weeks): it is written to the terminal when one is attached,
 * else to DATA_DIR/initial-admin-password (mode 0600), and the log says only where.
 */
export async function prepareDataDir(runtime: Runtime, output: FirstAdminOutput = {}): Promise<void> {
  const log = runtime.log.child({ component: 'boot' });
  const seeded = await runtime.store.meta.get<string>('seededAt');
  if (!seeded) {
    const empty = (await runtime.store.articles.count({})) === 0 && (await runtime.store.users.count()) === 0;
    if (empty && runtime.config.SEED === 'demo') {
      // Seeding (fixtures, hero-image drawing, sharp) is loaded only for the one start that seeds an empty DATA_DIR.
      const { seedDemoContent } = await import('./seed.ts');
      const summary = await seedDemoContent(runtime);
      log.info(`Seeded demo content: ${summary}`);
    }
    await runtime.store.meta.set('seededAt', new Date().toISOString());
  }
  if (output.production && runtime.config.ADMIN_PASSWORD === undefined) {
    if ((await runtime.store.users.count()) === 0)
      log.warn(
        'No admin account yet: stop the server and run `npm run user -- add NAME` (it prints a password once), or set ADMIN_PASSWORD.',
      );
    return;
  }
  const admin = await ensureFirstAdmin(runtime);
  if (!admin) return;
  if (!admin.generated) {
    log.info({ username: admin.username }, `Admin account created: ${admin.username} (password: the ADMIN_PASSWORD you set)`);
    return;
  }
  if (output.isTty ?? process.stderr.isTTY === true) {
    process.stderr.write(
      [
        '',
        '  Admin account created. Sign in at /login with:',
        `    username: ${admin.username}`,
        `    password: ${admin.password}`,
        '  This password is shown only once; reset it with `npm run user -- reset NAME`.',
        '',
        '',
      ].join('\n'),
    );
    log.info({ username: admin.username }, `Admin account created: ${admin.username} (the generated password was shown on the terminal)`);
    return;
  }
  const file = path.join(path.resolve(runtime.config.DATA_DIR), INITIAL_PASSWORD_FILE);
  fs.writeFileSync(file, `username: ${admin.username}\npassword: ${admin.password}\n`, { mode: 0o600 });
  // writeFileSync's mode applies only to a new file, and the umask may have narrowed it anyway.
  fs.chmodSync(file, 0o600);
  log.warn(
    { username: admin.username, file },
    `Admin account created: ${admin.username}; its generated password is in ${file} (mode 0600): read it, then delete the file`,
  );
}

/** Opens the store for this process, prepares it and starts the background services. */
export async function bootRuntime(
  config: Config,
  options: { services?: boolean; production?: boolean; log?: { log: Logger; requests: RequestScope } } = {},
): Promise<Runtime> {
  const runtime = await startRuntime(config, options.log ? { log: options.log } : {});
  await prepareDataDir(runtime, { production: options.production ?? false });
  if (options.services !== false) await startBackgroundServices(runtime);
  return runtime;
}
