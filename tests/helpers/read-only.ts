/**
 * Folders a process really cannot write, for tests of the refusals: as root, permission bits stop
 * nothing, so the folder is made immutable (chattr +i); as another user, mode 0555 does it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const asRoot = process.getuid?.() === 0;

/** Makes `folder` unwritable and checks that a write there now fails; answers the function that undoes it. */
export function makeUnwritable(folder: string): () => void {
  if (asRoot) execFileSync('chattr', ['+i', folder]);
  else fs.chmodSync(folder, 0o555);
  const restore = () => {
    if (asRoot) execFileSync('chattr', ['-i', folder]);
    else fs.chmodSync(folder, 0o755);
  };
  try {
    fs.writeFileSync(path.join(folder, '.unwritable-check'), '');
  } catch {
    return restore;
  }
  fs.rmSync(path.join(folder, '.unwritable-check'));
  restore();
  throw new Error(`Could not make ${folder} unwritable: a test of a refusal would prove nothing here.`);
}
