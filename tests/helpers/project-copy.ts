/** A copy of this checkout in a temp folder, for tests that edit the sources as a deploy would and build them. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './server.ts';

/** The checkout's files as they are now (committed or not) in a new temp folder, with its installed packages linked in. */
export function copyProject(prefix: string): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file && fs.existsSync(path.join(ROOT, file)));
  for (const file of files) fs.cpSync(path.join(ROOT, file), path.join(copy, file), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  return copy;
}

/** Edits a file of the copy; the edit must change it. */
export function editFile(copy: string, file: string, change: (text: string) => string): void {
  const full = path.join(copy, file);
  const before = fs.readFileSync(full, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`${file} was not changed`);
  fs.writeFileSync(full, after);
}
