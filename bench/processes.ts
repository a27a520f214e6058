/** The bench's own processes besides the load generator: the server (with its per-request renderer) and nginx, and small waits on them. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, SERVER_NODE_FLAGS, waitForListening } from '../scripts/server-process.ts';
import { children, NODE } from './children.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN = { username: 'bench-admin', password: 'bench-password-not-secret' };

export type BenchServer = {
  url: string;
  /** Renders each reader page per request, as the render thread draws it (bench/twin-server.ts). */
  ssrUrl: string;
  output: () => string;
  searchBuilds: number[];
  stop: () => Promise<void>;
};

export async function startBenchServer(dataDir: string, outDir: string, workDir: string): Promise<BenchServer> {
  const ssrFile = path.join(workDir, 'ssr-url');
  const child = spawn(NODE, [...SERVER_NODE_FLAGS, path.join(ROOT, 'bench/twin-server.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      OUT_DIR: outDir,
      SERVE_DIR: path.join(outDir, 'client'),
      SEED: 'none',
      // Production mode (scripts/serve.ts run directly) refuses to start without it; the build's default.
      SITE_URL: 'http://localhost:4321',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      TRUST_PROXY: 'true',
      // The per-IP limits (60 votes a minute) would turn a load test into a 429 test.
      RATE_LIMIT_FACTOR: '10000',
      BENCH_SSR_FILE: ssrFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  // When each search index rebuild was reported (performance.now() of this process).
  const searchBuilds: number[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('search index rebuilt')) searchBuilds.push(performance.now());
  });
  const { url, output, exited } = await waitForListening(child, 120_000);
  for (let i = 0; i < 100 && !fs.existsSync(ssrFile); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    url,
    ssrUrl: fs.readFileSync(ssrFile, 'utf8'),
    output,
    searchBuilds,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

export function findNginx(): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(candidate)) return candidate;
  return undefined;
}

/**
 * nginx serving the same output folder as our server: sendfile, no logging; `auto` is one worker per
 * core (Debian's default). No compressing per request (gzip off), and the same precompressed .gz twins
 * ours serves (gzip_static; Debian's nginx has no brotli module), so both send the same bytes.
 */
export async function startNginx(
  binary: string,
  clientDir: string,
  imagesDir: string,
  workDir: string,
  workers: number | 'auto',
): Promise<{ url: string; workers: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const prefix = path.join(workDir, `nginx-${workers}`);
  fs.mkdirSync(path.join(prefix, 'logs'), { recursive: true });
  const conf = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes ${workers};
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  tcp_nopush on;
  gzip off;
  gzip_static on;
  gzip_vary on;
  etag on;
  keepalive_requests 100000;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${clientDir};
    location /images/ { alias ${imagesDir}/; }
    location / { try_files $uri $uri/index.html =404; }
  }
}
`,
  );
  const child = spawn(binary, ['-p', prefix, '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(url);
      break;
    } catch {
      if (i > 100 || child.exitCode !== null) throw new Error(`nginx did not start: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    workers: workers === 'auto' ? `${os.cpus().length} workers, one per core` : `${workers} worker`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

export async function waitUntil(timeoutMs: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

export const pageText = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
};
