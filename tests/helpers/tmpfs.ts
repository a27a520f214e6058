/**
 * A real full disk for tests: a small tmpfs mounted as root, filled to the last byte by one big file
 * and freed by removing it. Tests that need it skip (saying why) when not run as root.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const asRoot = process.getuid?.() === 0;

/** Mounts a tmpfs of `sizeMb` on a new folder; answers the folder and the function that unmounts and removes it. */
export function mountTmpfs(sizeMb: number, prefix = 'meridian-tmpfs-'): { dir: string; unmount: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  return {
    dir,
    unmount: () => {
      // Lazily: a server killed a moment ago may still have a file open there.
      execFileSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Bytes a non-root writer may still write under `dir`. */
export function freeBytes(dir: string): number {
  const stats = fs.statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/**
 * Fills the file system of `dir` with `dir/<name>` until a write of even one byte is refused
 * (ENOSPC); answers the function that frees the space again.
 */
export function fillDisk(dir: string, name = 'filler.bin'): () => void {
  const file = path.join(dir, name);
  const fd = fs.openSync(file, 'a');
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 1]) {
      const chunk = Buffer.alloc(size, 0x2e);
      for (;;) {
        try {
          fs.writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  // The proof that it is full: a new file cannot get a byte.
  try {
    fs.writeFileSync(path.join(dir, '.fill-check'), 'x');
  } catch (error) {
    fs.rmSync(path.join(dir, '.fill-check'), { force: true });
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    return () => fs.rmSync(file, { force: true });
  }
  throw new Error(`Filling ${dir} did not make it full: a test of a full disk would prove nothing here.`);
}

/** Every file under `dir` whose name says it is a temp or partial file (none may be left after a refused write). */
export function leftoverTempFiles(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile() && /\.(?:tmp|part)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}
