/** `npm start`: prepares DATA_DIR (demo content, first admin), builds when needed, then serves. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getConfig } from '../src/config.ts';
import { prepareDataDir } from '../src/server/boot.ts';
import { startRuntime, stopRuntime } from '../src/server/runtime.ts';
import { needsBuild, runBuild } from './build-state.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = getConfig();

const runtime = await startRuntime(config).catch((error: Error) => {
  console.error(`Cannot start: ${error.message}`);
  process.exit(2);
});
await prepareDataDir(runtime);
const store = { id: runtime.store.id, version: await runtime.store.articles.version() };
await stopRuntime();

const reason = needsBuild(root, store);
if (reason) {
  console.log(`Building the site (${reason})...`);
  runBuild(root, { ...process.env, DATA_DIR: config.DATA_DIR }, store);
}
await import('./serve.ts');
