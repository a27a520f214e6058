/** The children of a process, read from /proc (Linux): how the benches and the tests find a server's Pagefind process from outside. */
import fs from 'node:fs';

/** Process ids of the children process `pid` (by default this one) started; none once it has ended. */
export function childProcesses(pid: number = process.pid): number[] {
  if (process.platform !== 'linux') return [];
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // it ended
  }
  const found: number[] = [];
  for (const tid of tids) {
    try {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean))
        found.push(Number(child));
    } catch {
      // the thread ended
    }
  }
  return found;
}

/** Process ids of the children process `pid` (by default this one) started, whose command name begins with `prefix`. */
export function childProcessesNamed(prefix: string, pid: number = process.pid): number[] {
  return childProcesses(pid).filter((child) => {
    try {
      return fs.readFileSync(`/proc/${child}/comm`, 'utf8').startsWith(prefix);
    } catch {
      return false; // it ended
    }
  });
}
