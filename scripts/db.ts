/**
 * `npm run db:migrate` / `npm run db:import` / `npm run db:export -- DIR`: the PostgreSQL store's
 * schema migrations, and moving data between a lowdb DATA_DIR and the database in DATABASE_URL.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config.ts';
import { exportFromDatabase, importIntoDatabase, migrateDatabase, type Counts } from '../src/store/database.ts';
import { copyImages } from '../src/store/backup.ts';
import { createProgress } from './progress.ts';

const USAGE = `Usage (DATABASE_URL names the database):
  npm run db:migrate                 apply the schema migrations not yet applied (the server also does at start)
  npm run db:import [-- --from DIR]  copy the lowdb store in DIR (default DATA_DIR) into the empty database,
                                     and DIR/images into DATA_DIR/images
  npm run db:export -- DIR           write the database into DIR (new or empty) as a lowdb DATA_DIR,
                                     with a copy of DATA_DIR/images

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

/** The processed images go with the store: the pages name them, and a server serves them from its DATA_DIR. */
async function carryImages(command: string, from: string, to: string): Promise<void> {
  const progress = createProgress(`[db:${command}]`);
  const copied = await copyImages(from, to, (done, total) => progress.update('images', done, total)).finally(() => progress.stop());
  console.log(
    `[db:${command}] images: ${copied} files of ${path.join(path.resolve(from), 'images')} in ${path.join(path.resolve(to), 'images')}`,
  );
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
    await carryImages('import', from, config.DATA_DIR);
  } else if (command === 'export' && target && extra.length === 0) {
    const counts = await exportFromDatabase(url, config.DATA_DIR, target);
    console.log(`[db:export] the database -> ${path.resolve(target)}: counts agree on both sides\n${table(counts)}`);
    await carryImages('export', config.DATA_DIR, target);
  } else {
    fail(USAGE);
  }
} catch (error) {
  fail(`[db:${command}] ${(error as Error).message}`);
}
