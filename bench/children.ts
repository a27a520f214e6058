/** Child processes of the benches: node scripts run with their output collected, and the load generator in a process of its own. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadResult } from './load.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const NODE = process.execPath;
/** Every child still running, so a bench that fails or is interrupted can kill them all. */
export const children = new Set<ChildProcess>();

/** Runs a node script from the project root; answers its exit code, its whole output and how long it took. */
export function runNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number; output: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(NODE, [script, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code: code ?? 1, output, ms: performance.now() - t0 });
    });
  });
}

/** One autocannon run in bench/load.ts's own process, so the load generator does not share the bench's event loop. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const result = await runNode(path.join(ROOT, 'bench/load.ts'), [JSON.stringify(job)], {}, (job.durationS + 60) * 1000);
  const line = result.output.trim().split('\n').at(-1) ?? '';
  if (result.code !== 0 || !line.startsWith('{')) throw new Error(`load generator failed: ${result.output.slice(-2000)}`);
  return JSON.parse(line) as LoadResult;
}
