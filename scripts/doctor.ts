/**
 * `npm run doctor`: checks the configuration in the environment as `npm run serve` reads it (store,
 * migrations, folders, build, mail, disk) and prints one line per check; exit 1 when one fails.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../src/config.ts';
import { runDoctorChecks } from '../src/server/doctor.ts';
import { parseProductionConfig } from '../src/server/production.ts';
import { outDirOf, serveDirOf } from './build-state.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function printProblem(name: string, detail: string): never {
  console.log(`PROBLEM ${name}: ${detail}`);
  console.log('1 problem: fix it and run `npm run doctor` again.');
  process.exit(1);
}

let config: Config;
let outDir: string;
try {
  config = parseProductionConfig();
} catch (error) {
  const [title, ...issues] = (error as Error).message.split('\n');
  printProblem('configuration', `${title} ${issues.map((line) => line.trim()).join('; ')}`);
}
try {
  outDir = outDirOf(root);
} catch (error) {
  printProblem('OUT_DIR', (error as Error).message);
}

const results = await runDoctorChecks({ config, env: process.env, outDir, servedDir: serveDirOf(root) });
for (const result of results) console.log(`${result.ok ? 'ok     ' : 'PROBLEM'} ${result.name}: ${result.detail}`);
const problems = results.filter((result) => !result.ok).length;
console.log(
  problems === 0
    ? `All ${results.length} checks passed.`
    : `${problems} problem${problems === 1 ? '' : 's'}: fix ${problems === 1 ? 'it' : 'them'} and run \`npm run doctor\` again.`,
);
process.exitCode = problems === 0 ? 0 : 1;
