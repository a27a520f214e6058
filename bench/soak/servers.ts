/**
 * The soak run's servers and their disk: scripts/serve.ts processes on fixed ports (so nginx finds a
 * restarted one), a tmpfs for their data and served folders (so the disk can be filled), and what each
 * process logged, counted per phase.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, SERVER_NODE_FLAGS, waitForListening } from '../../scripts/server-process.ts';
import { children, NODE } from '../children.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export type LogLine = { t: number; level: string; msg: string };

export type SoakServer = {
  name: string;
  port: number;
  /** http://127.0.0.1:port, straight to the server (nginx is the front readers use). */
  url: string;
  dataDir: string;
  serveDir: string;
  pid: () => number | undefined;
  running: () => boolean;
  /** Spawns the server and waits until it listens; answers the seconds that took. */
  start: () => Promise<number>;
  /** SIGKILL: a crash, no clean stop. */
  kill: () => Promise<void>;
  /** SIGTERM and wait. */
  stop: () => Promise<void>;
  /** Warn, error and fatal lines other than the per-request access lines, with when they were written. */
  problems: LogLine[];
  /** Lines of every level, counted (access lines included). */
  levels: Record<string, number>;
};

/** The environment every soak server shares; each adds its own port and folders. */
export type ServerEnv = Record<string, string>;

/**
 * A served folder for one server: a copy of the build's client folder and its render manifest, as the
 * tests' siteCopyFor makes one. Readable by nginx's workers (mkdirSync, not mkdtemp's 0700).
 */
export function copySite(buildDir: string, siteDir: string): string {
  const clientDir = path.join(siteDir, 'client');
  fs.cpSync(path.join(buildDir, 'client'), clientDir, { recursive: true });
  const state = path.join(buildDir, 'render-state.json');
  if (fs.existsSync(state)) fs.copyFileSync(state, path.join(siteDir, 'render-state.json'));
  return clientDir;
}

/** A server on `diskDir`/<name>-data and <name>-site, on a port chosen now and kept across restarts. */
export async function createServer(name: string, diskDir: string, buildDir: string, env: ServerEnv): Promise<SoakServer> {
  const port = await freePort();
  const dataDir = path.join(diskDir, `${name}-data`);
  // nginx's workers pass through the data folder to its images/ only (deploy/nginx.conf).
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  const serveDir = copySite(buildDir, path.join(diskDir, `${name}-site`));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const problems: LogLine[] = [];
  const levels: Record<string, number> = {};

  const onLine = (line: string) => {
    if (!line.startsWith('{')) {
      // Output outside the logger (a stack printed by a library): one entry per trace, its first frame kept.
      const last = problems.at(-1);
      if (/^\s+(at |\.\.\.|\{|\}|\w+: )/.test(line) && last?.level === 'raw') {
        if (!last.msg.includes(' | at ') && /^\s+at /.test(line)) last.msg = `${last.msg} | ${line.trim()}`.slice(0, 500);
        return;
      }
      if (line.trim()) problems.push({ t: performance.now(), level: 'raw', msg: line.slice(0, 500) });
      return;
    }
    try {
      const entry = JSON.parse(line) as { level?: string; msg?: string; method?: string; status?: number; err?: { message?: string } };
      const level = entry.level ?? 'unknown';
      levels[level] = (levels[level] ?? 0) + 1;
      const access = entry.method !== undefined && entry.status !== undefined;
      if (!access && (level === 'warn' || level === 'error' || level === 'fatal'))
        problems.push({
          t: performance.now(),
          level,
          msg: `${entry.msg ?? ''}${entry.err?.message ? ` (${entry.err.message})` : ''}`.slice(0, 500),
        });
    } catch {
      problems.push({ t: performance.now(), level: 'raw', msg: line.slice(0, 500) });
    }
  };

  const server: SoakServer = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    dataDir,
    serveDir,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    running: () => server.pid() !== undefined,
    start: async () => {
      const t0 = performance.now();
      child = spawn(NODE, [...SERVER_NODE_FLAGS, path.join(ROOT, 'scripts/serve.ts')], {
        cwd: ROOT,
        env: { ...process.env, ...env, PORT: String(port), DATA_DIR: dataDir, SERVE_DIR: serveDir, LOG_FORMAT: 'json' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      let partial = '';
      const onData = (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) onLine(line);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      const current = child;
      const listening = await waitForListening(current, 120_000, 200_000);
      exited = listening.exited.then(() => void children.delete(current));
      return Math.round((performance.now() - t0) / 100) / 10;
    },
    kill: async () => {
      if (server.running()) child!.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (server.running()) child!.kill('SIGTERM');
      await exited;
    },
    problems,
    levels,
  };
  return server;
}

export type Disk = {
  dir: string;
  /** A tmpfs (as root), so the fault can fill it; else a plain folder and the disk-full fault is skipped. */
  tmpfs: boolean;
  /** Fills it to the last byte; answers the bytes written. */
  fill: () => number;
  /** Removes the filler. */
  free: () => void;
  unmount: () => void;
};

/** `size` MB of tmpfs on `dir` as root (always unmounted by `unmount`), else the folder alone. */
export function mountDisk(dir: string, sizeMB: number): Disk {
  fs.mkdirSync(dir, { recursive: true });
  const tmpfs = process.getuid?.() === 0;
  if (tmpfs) execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMB}m,mode=0755`, 'tmpfs', dir]);
  const filler = path.join(dir, 'soak-filler');
  return {
    dir,
    tmpfs,
    fill: () => {
      const fd = fs.openSync(filler, 'w');
      let written = 0;
      try {
        // Large blocks first, then small ones for the last pages.
        for (const size of [1 << 20, 4096]) {
          const block = Buffer.alloc(size, 0x78);
          for (;;) {
            try {
              written += fs.writeSync(fd, block);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        fs.closeSync(fd);
      }
      return written;
    },
    free: () => fs.rmSync(filler, { force: true }),
    unmount: () => {
      if (!tmpfs) return;
      try {
        execFileSync('umount', [dir]);
      } catch {
        // Something still holds a file there (a server that did not exit yet): detach it now, freed when released.
        execFileSync('umount', ['-l', dir]);
      }
    },
  };
}

/** Reads a process's resident memory (MB) and open file descriptors, or undefined once it is gone. */
export function readProcess(pid: number): { rssMB: number; fds: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
    return { rssMB: Math.round(rssKb / 102.4) / 10, fds: fs.readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}
