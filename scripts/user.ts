/**
 * `npm run user -- add NAME [--role ROLE]` / `npm run user -- reset NAME`: creates a user (an admin
 * unless --role says otherwise) or resets a password.
 * The password comes from `--password X`, else USER_PASSWORD, else a generated one printed once.
 */
import { parseArgs } from 'node:util';
import { getConfig } from '../src/config.ts';
import { generatePassword, upsertUser } from '../src/server/auth.ts';
import { isAppError } from '../src/server/errors.ts';
import { startRuntime, stopRuntime } from '../src/server/app.ts';
import { ROLES, roleSchema, type Role } from '../src/schemas/auth.ts';

const USAGE = `Usage:
  npm run user -- add NAME   [--role ROLE] [--password PASSWORD]   create an account (ROLE: ${ROLES.join(', ')}; default admin)
  npm run user -- reset NAME [--password PASSWORD]   set a new password (signs the user out everywhere)

Without --password, USER_PASSWORD is used, else a random password is generated and printed once.
Stop the server first: it holds the data folder (DATA_DIR) while it runs.`;

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

/** Parses the command line; exits with the usage text when it is not understood. */
function readArguments(argv: string[]): {
  command: 'add' | 'reset';
  username: string;
  password: string | undefined;
  role: Role | undefined;
} {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { password: { type: 'string' }, role: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (parsed.values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const [command, username, ...extra] = parsed.positionals;
  if ((command !== 'add' && command !== 'reset') || !username || extra.length > 0) fail(USAGE);
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(username)) fail('A username is 1 to 64 letters, digits, dots, dashes or underscores.');
  const password = parsed.values.password ?? (process.env.USER_PASSWORD || undefined);
  if (password !== undefined && password.length < 8) fail('Passwords need at least 8 characters.');
  const role = parsed.values.role;
  if (role !== undefined && !roleSchema.safeParse(role).success) fail(`Unknown role "${role}"; expected one of ${ROLES.join(', ')}.`);
  if (role !== undefined && command === 'reset') fail("--role is for add; change a role in the dashboard's Users tab.");
  return { command, username, password, role: role as Role | undefined };
}

async function main(): Promise<void> {
  const { command, username, password, role } = readArguments(process.argv.slice(2));
  const config = getConfig();
  let runtime;
  try {
    runtime = await startRuntime(config);
  } catch (error) {
    if ((error as Error)?.name === 'StoreLockedError') {
      fail(`Cannot change users while the data folder is in use: ${(error as Error).message}`, 2);
    }
    throw error;
  }
  try {
    const existing = await runtime.store.users.getByUsername(username);
    if (command === 'add' && existing)
      fail(`User "${existing.username}" already exists; use \`npm run user -- reset ${existing.username}\` to set a new password.`);
    if (command === 'reset' && !existing) fail(`No user "${username}"; use \`npm run user -- add ${username}\` to create one.`);
    const chosen = password ?? generatePassword();
    const user = await upsertUser(runtime, username, chosen, command === 'add' ? (role ?? 'admin') : undefined);
    console.log(
      command === 'add'
        ? `Created ${user.role ?? 'admin'} "${user.username}".`
        : `Password of "${user.username}" reset; their sessions were signed out.`,
    );
    if (password === undefined) console.log(`  password: ${chosen}\n  (shown only once: store it now)`);
  } finally {
    await stopRuntime(runtime);
  }
}

main().catch((error: unknown) => {
  console.error(isAppError(error) ? error.message : error);
  process.exit(1);
});
