/** Running `npm run rebuild` on a test's data and comparing the folders it writes, for the rebuild tests. */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './server.ts';
import { storeEnvFor } from './postgres.ts';

/**
 * Runs scripts/rebuild.ts of the project at `root` (this checkout, or a test's copy of it) into `outDir`
 * from `dataDir` (its test database on PostgreSQL); answers its exit code, output and time.
 */
export async function runRebuild(
  outDir: string,
  dataDir: string,
  args: string[] = [],
  env: Record<string, string> = {},
  root = ROOT,
): Promise<{ code: number; output: string; ms: number }> {
  const started = performance.now();
  const store = await storeEnvFor(dataDir);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/rebuild.ts'), ...args], {
      cwd: root,
      env: { ...process.env, OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none', ...store, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code: code ?? 1, output, ms: performance.now() - started }));
  });
}

/** The SHA-256 of a file's or a page's bytes, in hex. */
export const digest = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every file under a folder with the hash of its bytes. */
export function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.set(path.relative(dir, full), digest(fs.readFileSync(full)));
    }
  };
  walk(dir);
  return files;
}

/** The files that differ between two trees, or are in one only (named by `names`). */
export function differences(a: Map<string, string>, b: Map<string, string>, names: [string, string] = ['incremental', 'full']): string[] {
  const out: string[] = [];
  for (const [file, hash] of a) if (b.get(file) !== hash) out.push(b.has(file) ? `differs: ${file}` : `only in ${names[0]}: ${file}`);
  for (const file of b.keys()) if (!a.has(file)) out.push(`only in ${names[1]}: ${file}`);
  return out.sort();
}

/** The number of pages an incremental rebuild rendered, from its summary line. */
export const renderedCount = (output: string) => Number(/incremental: (\d+) of \d+ pages rendered/.exec(output)?.[1] ?? NaN);
