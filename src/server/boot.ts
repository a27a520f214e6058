/** Starting the application in a process: open the store, fill an empty DATA_DIR, create the first admin, start services. */
import type { Config } from '../config.ts';
import { ensureFirstAdmin } from './auth.ts';
import { startRuntime, type Runtime } from './runtime.ts';
import { startBackgroundServices } from './services.ts';

/**
 * Seeds an empty DATA_DIR (SEED=demo) and creates the first admin, printing generated credentials once.
 * In production a generated password would land in the journal: without ADMIN_PASSWORD, no admin is made.
 */
export async function prepareDataDir(
  runtime: Runtime,
  { production = false, log = console.log }: { production?: boolean; log?: (line: string) => void } = {},
): Promise<void> {
  const seeded = await runtime.store.meta.get<string>('seededAt');
  if (!seeded) {
    const empty = (await runtime.store.articles.count({})) === 0 && (await runtime.store.users.count()) === 0;
    if (empty && runtime.config.SEED === 'demo') {
      // Seeding (fixtures, hero-image drawing, sharp) is loaded only for the one start that seeds an empty DATA_DIR.
      const { seedDemoContent } = await import('./seed.ts');
      const summary = await seedDemoContent(runtime);
      log(`Seeded demo content: ${summary}`);
    }
    await runtime.store.meta.set('seededAt', new Date().toISOString());
  }
  if (production && runtime.config.ADMIN_PASSWORD === undefined) {
    if ((await runtime.store.users.count()) === 0)
      log('No admin account yet: stop the server and run `npm run user -- add NAME` (it prints a password once), or set ADMIN_PASSWORD.');
    return;
  }
  const admin = await ensureFirstAdmin(runtime);
  if (admin) {
    log('');
    log('  Admin account created. Sign in at /login with:');
    log(`    username: ${admin.username}`);
    log(`    password: ${admin.generated ? admin.password : '(the ADMIN_PASSWORD you set)'}`);
    if (admin.generated) log('  This password is shown only once; reset it with `npm run user -- reset NAME`.');
    log('');
  }
}

/** Opens the store for this process, prepares it and starts the background services. */
export async function bootRuntime(config: Config, options: { services?: boolean; production?: boolean } = {}): Promise<Runtime> {
  const runtime = await startRuntime(config);
  await prepareDataDir(runtime, { production: options.production ?? false });
  if (options.services !== false) await startBackgroundServices(runtime);
  return runtime;
}
