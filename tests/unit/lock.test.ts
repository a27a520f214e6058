/** The DATA_DIR lock: a second process is refused, a dead holder's lock is taken over. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, StoreLockedError, type Store } from '../../src/store/index.ts';
import { lockHolder } from '../../src/store/lock-file.ts';
import { closeQuietly, makeTempDir } from './support.ts';

const STORE_MODULE = pathToFileURL(path.resolve(import.meta.dirname, '../../src/store/index.ts')).href;

/** A real second process that opens the store, says so, and holds it until killed. */
async function holdInChild(dir: string): Promise<ChildProcess> {
  const script = `const { openStore } = await import(${JSON.stringify(STORE_MODULE)}); await openStore(${JSON.stringify(dir)}); console.log('opened'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('opened')) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`child exited ${code}: ${output}`)));
  });
  return child;
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

let child: ChildProcess | undefined;
let store: Store | undefined;

afterEach(async () => {
  if (child) await killAndWait(child);
  child = undefined;
  await closeQuietly(store);
  store = undefined;
});

describe('the DATA_DIR lock', () => {
  it('refuses a second process while the first holds the folder, then takes over a dead one’s lock', async () => {
    const dir = makeTempDir();
    child = await holdInChild(dir);
    expect(lockHolder(dir)).toBe(child.pid);
    const refused = await openStore(dir).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StoreLockedError);
    expect((refused as Error).message).toContain(`pid ${child.pid}`);
    expect((refused as Error).message).toContain(dir);

    // SIGKILL leaves the lock file behind: the next opener must take it over.
    await killAndWait(child);
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(true);
    expect(lockHolder(dir)).toBeUndefined();
    store = await openStore(dir);
    expect(fs.readFileSync(path.join(dir, '.lock'), 'utf8')).toBe(String(process.pid));
  });

  it('releases the lock on close so the folder can be opened again', async () => {
    const dir = makeTempDir();
    const first = await openStore(dir);
    await first.close();
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
    store = await openStore(dir);
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(true);
  });

  it('does not take a lock for a read-only snapshot', async () => {
    const dir = makeTempDir();
    child = await holdInChild(dir);
    const snapshot = await openStore(dir, 'read');
    await snapshot.close();
    expect(lockHolder(dir)).toBe(child.pid);
  });
});
