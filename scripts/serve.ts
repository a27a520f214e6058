/** Starts the production server: the built Astro app behind our static file server, with the runtime booted first. */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import { getConfig } from '../src/config.ts';
import { bootRuntime } from '../src/server/boot.ts';
import { stopRuntime } from '../src/server/runtime.ts';
import { createHttpServer, type AstroHandler } from '../src/api/node-server.ts';
import { StoreLockedError } from '../src/store/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.resolve(root, process.env.OUT_DIR ?? 'dist');
const entry = path.join(outDir, 'server/entry.mjs');

async function main(): Promise<void> {
  const config = getConfig();
  if (!fs.existsSync(entry)) {
    console.error('No build found (dist/server/entry.mjs). Run `npm run build` first, or use `npm start`.');
    process.exit(1);
  }
  await bootRuntime(config);
  // The bundle must not start a standalone server of its own.
  process.env.ASTRO_NODE_AUTOSTART = 'disabled';
  const { handler } = (await import(pathToFileURL(entry).href)) as { handler: AstroHandler };
  const server = createHttpServer({ clientDir: path.join(outDir, 'client'), imagesDir: path.join(path.resolve(config.DATA_DIR), 'images'), handler });
  server.listen(config.PORT, config.HOST, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    console.log(`Listening on http://${shown}:${port}`);
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    server.close();
    server.closeIdleConnections();
    void stopRuntime().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof StoreLockedError || (error as Error)?.name === 'StoreLockedError') {
    console.error(`Cannot start: ${(error as Error).message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
