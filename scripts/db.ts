/**
 * `npm run db:migrate` / `npm run db:import` / `npm run db:export -- DIR`: the PostgreSQL store's
 * schema migrations, and moving data between a lowdb DATA_DIR and the database in DATABASE_URL.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config.ts';
import { exportFromDatabase, importIntoDatabase, migrateDatabase, type Counts } from '../src/store/database.ts';

const USAGE = `Usage (DATABASE_URL names the database):
  npm run db:migrate                 apply the schema migrations not yet applied (the server also does at start)
  npm run db:import [-- --from DIR]  copy the lowdb store in DIR (default DATA_DIR) into the empty database
  npm run db:export -- DIR           write the database into DIR (new or empty) as a lowdb DATA_DIR

Stop the servers first: import refuses a data folder a server holds, and both compare counts at the end.`;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

function table(counts: Counts): string {
  return Object.entries(counts)
    .map(([name, n]) => `  ${name.padEnd(14)} ${n}`)
    .join('\n');
}

let parsed;
try {
  parsed = parseArgs({ allowPositionals: true, options: { from: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
} catch (error) {
  fail(`${(error as Error).message}\n\n${USAGE}`);
}
const [command, target, ...extra] = parsed.positionals;
if (parsed.values.help) {
  console.log(USAGE);
  process.exit(0);
}
const config = parseConfig();
if (!config.DATABASE_URL) fail(`DATABASE_URL is not set.\n\n${USAGE}`);
const url = config.DATABASE_URL;

try {
  if (command === 'migrate' && !target) {
    const applied = await migrateDatabase(url);
    console.log(applied.length ? `[db:migrate] applied ${applied.join(', ')}` : '[db:migrate] the schema is up to date');
  } else if (command === 'import' && !target) {
    const from = path.resolve(parsed.values.from ?? config.DATA_DIR);
    const counts = await importIntoDatabase(url, from);
    console.log(`[db:import] ${from} -> the database: counts agree on both sides\n${table(counts)}`);
  } else if (command === 'export' && target && extra.length === 0) {
    const counts = await exportFromDatabase(url, config.DATA_DIR, target);
    console.log(`[db:export] the database -> ${path.resolve(target)}: counts agree on both sides\n${table(counts)}`);
  } else {
    fail(USAGE);
  }
} catch (error) {
  fail(`[db:${command}] ${(error as Error).message}`);
}
