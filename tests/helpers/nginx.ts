/**
 * Debian's nginx as a child process, running deploy/nginx.conf (the static front of one server) or
 * deploy/nginx-multi.conf (the balancer before two) with folders and ports swapped in: shared by the
 * nginx-front and multi-server tests, bench:scale and bench:servers.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/server-process.ts';
import { ROOT } from './server.ts';

export const NGINX = '/usr/sbin/nginx';
export const BROTLI_STATIC = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';

/** Whether nginx and the brotli_static module deploy/nginx.conf loads are installed. */
export function nginxAvailable(): boolean {
  return fs.existsSync(NGINX) && fs.existsSync(BROTLI_STATIC);
}

export type FrontOptions = {
  /** The server's SERVE_DIR. */
  serveDir: string;
  /** The server's DATA_DIR (nginx serves its images/ subfolder). */
  dataDir: string;
  /** The server's port. */
  serverPort: number;
  /** The port nginx listens on (127.0.0.1). */
  listenPort: number;
};

/** A config of deploy/ with `swaps` made (every occurrence); throws if one of the lines is no longer there. */
export function deployConfig(name: string, swaps: [string, string][]): string {
  let conf = fs.readFileSync(path.join(ROOT, 'deploy', name), 'utf8');
  for (const [from, to] of swaps) {
    if (!conf.includes(from)) throw new Error(`deploy/${name} has no "${from}" to swap`);
    conf = conf.split(from).join(to);
  }
  return conf;
}

/** deploy/nginx.conf with the lines its comments mark "swap in" set for one server. */
export function frontConfig(options: FrontOptions): string {
  return deployConfig('nginx.conf', [
    ['server 127.0.0.1:4321;', `server 127.0.0.1:${options.serverPort};`],
    ['listen 127.0.0.1:8080;', `listen 127.0.0.1:${options.listenPort};`],
    ['root /srv/meridian/dist/client;', `root "${path.resolve(options.serveDir)}";`],
    ['set $meridian_data_dir /srv/meridian/data;', `set $meridian_data_dir "${path.resolve(options.dataDir)}";`],
    // The snippets are included relative to the config's folder, and the config is written elsewhere.
    ['include nginx/', `include ${path.join(ROOT, 'deploy/nginx')}/`],
  ]);
}

/** deploy/nginx-multi.conf with its two upstream servers' ports and its listen port swapped in. */
export function balancerConfig(serverPorts: readonly [number, number], listenPort: number): string {
  return deployConfig('nginx-multi.conf', [
    ['server 127.0.0.1:4321 ', `server 127.0.0.1:${serverPorts[0]} `],
    ['server 127.0.0.1:4322 ', `server 127.0.0.1:${serverPorts[1]} `],
    ['listen 127.0.0.1:8080;', `listen 127.0.0.1:${listenPort};`],
  ]);
}

export type RunningNginx = {
  url: string;
  pid: number;
  /** Everything nginx printed (its error log goes to stderr). */
  output: () => string;
  stop: () => Promise<void>;
};

/**
 * Starts nginx on `conf` from a scratch prefix folder and resolves once it answers. `wrap` runs it
 * through another command (the bench's taskset); the master's workers inherit the CPU affinity.
 */
export async function startNginx(conf: string, listenPort: number, options: { wrap?: string[] } = {}): Promise<RunningNginx> {
  // npm test installs both when run as root; a run without them must fail, not pass by skipping.
  if (!fs.existsSync(NGINX) || (conf.includes(BROTLI_STATIC) && !fs.existsSync(BROTLI_STATIC))) {
    throw new Error(
      `nginx or its brotli_static module is not installed (${NGINX}, ${BROTLI_STATIC}): apt-get install -y nginx libnginx-mod-http-brotli-static`,
    );
  }
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-nginx-'));
  // Workers of a config with `user` (Debian's www-data) keep their scratch files under it.
  fs.chmodSync(prefix, 0o755);
  const file = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const args = ['-e', 'stderr', '-p', prefix, '-c', file, '-g', 'daemon off;'];
  const wrap = options.wrap ?? [];
  const child = spawn(wrap[0] ?? NGINX, [...wrap.slice(1), ...(wrap.length ? [NGINX] : []), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${listenPort}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(prefix, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`nginx exited: ${output}`);
    }
    // robots.txt is a file of every build (served by nginx, or by a server behind it).
    // Not followed: a site that redirects to https (deploy/nginx-site.conf) is up when it answers the redirect.
    const up = await fetch(`${url}/robots.txt`, { redirect: 'manual' }).then(
      async (response) => {
        await response.body?.cancel();
        return true;
      },
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not answer within 15 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { url, pid: child.pid!, output: () => output, stop };
}

/** nginx in front of one server: a free port, deploy/nginx.conf for that server, started. */
export async function startFront(server: Omit<FrontOptions, 'listenPort'>, options: { wrap?: string[] } = {}): Promise<RunningNginx> {
  const listenPort = await freePort();
  return startNginx(frontConfig({ ...server, listenPort }), listenPort, options);
}

/** nginx balancing two servers: a free port, deploy/nginx-multi.conf for their ports, started. */
export async function startBalancer(serverPorts: readonly [number, number]): Promise<RunningNginx> {
  const listenPort = await freePort();
  return startNginx(balancerConfig(serverPorts, listenPort), listenPort);
}
