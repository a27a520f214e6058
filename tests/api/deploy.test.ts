/**
 * What deploy/ ships, checked as far as this machine allows: the systemd unit (systemd-analyze verify
 * and its exposure score), docs/production.md's steps on a fresh data folder (`npm run db:migrate`,
 * `npm run user -- add`, `npm run doctor`, then the unit's own ExecStart and ExecStartPost with the
 * environment file made from .env.example, in a mount namespace as read-only as the unit's), and the
 * production nginx site in Debian's nginx.conf with a self-signed certificate in front of that server.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitForListening, type ServerOutput } from '../../scripts/server-process.ts';
import { ADMIN_URL_ENV, createDatabase, testingPostgres } from '../helpers/postgres.ts';
import { BROTLI_STATIC, deployConfig, startNginx, type RunningNginx } from '../helpers/nginx.ts';
import { ROOT, makeOutDir } from '../helpers/server.ts';

const UNIT = path.join(ROOT, 'deploy/meridian.service');
/** Where the unit and the site expect things, and what this test puts there. */
const INSTALL_DIR = '/srv/meridian';
const DATA_DIR = '/var/lib/meridian';
const SITE_HOST = 'news.example';

/** The unit's settings, each key with its values in order (a key may repeat). */
function readUnit(text = fs.readFileSync(UNIT, 'utf8')): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) settings.set(match[1]!, [...(settings.get(match[1]!) ?? []), match[2]!]);
  }
  return settings;
}

type Run = { status: number | null; stdout: string; stderr: string };

/** A command run to its end without blocking this process (the test's servers answer from it). */
async function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Run> {
  const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

// The same whatever TEST_STORE says (the steps use PostgreSQL themselves): run once, in the lowdb pass of `npm test`.
describe.skipIf(testingPostgres())('deploy/meridian.service', () => {
  /** The unit with its paths pointing at this checkout and real files, so verify checks what matters. */
  function installedCopy(text = fs.readFileSync(UNIT, 'utf8')): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-unit-'));
    const envFile = path.join(dir, 'meridian.env');
    fs.copyFileSync(path.join(ROOT, '.env.example'), envFile);
    const file = path.join(dir, 'meridian.service');
    fs.writeFileSync(file, text.split(INSTALL_DIR).join(ROOT).split('/etc/meridian/meridian.env').join(envFile).split(DATA_DIR).join(dir));
    return file;
  }

  it('passes systemd-analyze verify without a warning, and the check fails a broken copy', async () => {
    const good = await run('systemd-analyze', ['verify', installedCopy()]);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stderr.trim()).toBe('');
    // The check can fail: a misspelt setting and a command that is not there.
    const broken = installedCopy(
      fs
        .readFileSync(UNIT, 'utf8')
        .replace('NoNewPrivileges=', 'NoNewPrivilege=')
        .replace('TimeoutStartSec=', 'ExecStartPre=/nonexistent/node\nTimeoutStartSec='),
    );
    const bad = await run('systemd-analyze', ['verify', broken]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("Unknown key 'NoNewPrivilege'");
  });

  it('is hardened: systemd rates its exposure OK (under 3.5 of 10)', async () => {
    const result = await run('systemd-analyze', ['security', '--offline=true', installedCopy()]);
    const score = Number(/Overall exposure level for meridian\.service: ([\d.]+)/.exec(result.stdout + result.stderr)?.[1]);
    expect(score, result.stdout).toBeLessThan(3.5);
  });

  it('restarts on a crash but not on a refused configuration, stops within the drain, runs a dedicated user', () => {
    const unit = readUnit();
    expect(unit.get('Restart')).toEqual(['on-failure']);
    expect(unit.get('RestartPreventExitStatus')).toEqual(['2']);
    // The server exits by itself 9 s after SIGTERM (scripts/serve.ts); systemd waits a little longer.
    expect(Number.parseInt(unit.get('TimeoutStopSec')![0]!, 10)).toBeGreaterThan(9);
    expect(unit.get('User')).toEqual(['meridian']);
    expect(unit.get('ProtectSystem')).toEqual(['strict']);
    expect(unit.get('ReadWritePaths')).toEqual([`${DATA_DIR} ${INSTALL_DIR}/dist -/var/backups/meridian`]);
    expect(unit.get('MemoryDenyWriteExecute')).toBeUndefined();
  });
});

/**
 * Runs `command` as the unit would confine it: every mount read-only except the API file systems and
 * `writable` (ProtectSystem=strict with ReadWritePaths), a private /tmp (PrivateTmp), the environment
 * file read as the unit reads it. Not emulated: the user, the device, kernel and syscall restrictions.
 */
const CONFINE = `
set -e
env_file=$1; shift
count=$1; shift
writable=""
while [ "$count" -gt 0 ]; do writable="$writable $1"; mount --bind "$1" "$1"; shift; count=$((count - 1)); done
awk '{ print $5 }' /proc/self/mountinfo | sort -u | while read -r point; do
  case " $writable " in *" $point "*) continue ;; esac
  case "$point" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
  mount -o remount,bind,ro "$point"
done
mount -t tmpfs -o mode=1777 tmpfs /tmp
set -a
. "$env_file"
set +a
exec "$@"
`;

// The same whatever TEST_STORE says (the steps use PostgreSQL themselves): run once, in the lowdb pass of `npm test`.
describe.skipIf(testingPostgres())('the production steps on a fresh data folder (docs/production.md)', () => {
  const unit = readUnit();
  let work: string;
  let dataDir: string;
  let siteDir: string;
  let envFile: string;
  let port: number;
  let baseEnv: NodeJS.ProcessEnv;
  let server: ChildProcess | undefined;
  let listening: ServerOutput | undefined;
  let adminPassword = '';

  /** A command of the unit (ExecStart=...) as it runs here: the checkout in place of /srv/meridian. */
  const unitCommand = (key: string) => unit.get(key)![0]!.split(INSTALL_DIR).join(ROOT).split(' ');
  /** The unit's writable folders as this test has them. */
  const writable = () =>
    unit
      .get('ReadWritePaths')![0]!
      .split(' ')
      // An optional folder ("-" first: BACKUP_DIR) that this test does not use.
      .filter((folder) => !folder.startsWith('-'))
      .map((folder) => (folder === DATA_DIR ? dataDir : siteDir));
  /** A command with the environment file loaded, as the docs run npm's scripts (`set -a; . FILE`). */
  const withEnv = (command: string[]) => run('sh', ['-c', 'set -a; . "$0"; set +a; exec "$@"', envFile, ...command], { env: baseEnv });
  const confined = (command: string[]) => [
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    CONFINE,
    'confine',
    envFile,
    '2',
    ...writable(),
    ...command,
  ];

  beforeAll(async () => {
    work = makeOutDir('deploy-');
    fs.chmodSync(work, 0o755);
    dataDir = path.join(work, 'data');
    // The build output (dist/ in /srv/meridian, inside the project as OUT_DIR must be): the served folder's parent.
    siteDir = path.join(work, 'dist');
    // docs/production.md step: install -d -m 0711 -o meridian -g meridian /var/lib/meridian
    fs.mkdirSync(dataDir, { mode: 0o711 });
    port = await freePort();
    const database = await createDatabase(process.env[ADMIN_URL_ENV]!, `deploy_${process.pid}_${Date.now()}`);
    // docs/production.md step: the environment file from .env.example, its paths and database set.
    const swaps: [string, string][] = [
      [`DATA_DIR=${DATA_DIR}`, `DATA_DIR=${dataDir}`],
      ['DATABASE_URL=postgres://meridian@/meridian?host=/var/run/postgresql', `DATABASE_URL=${database}`],
      ['PORT=4321', `PORT=${port}`],
    ];
    let env = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    for (const [from, to] of swaps) {
      expect(env, `.env.example has ${from}`).toContain(`\n${from}\n`);
      env = env.replace(`\n${from}\n`, `\n${to}\n`);
    }
    // /srv/meridian builds into its own dist/; this checkout's dist/ is not the test's to replace.
    env += `\nOUT_DIR=${siteDir}\n`;
    envFile = path.join(work, 'meridian.env');
    fs.writeFileSync(envFile, env, { mode: 0o640 });
    // What systemd gives a service: a PATH, the unit's Environment= lines; no test settings of this process.
    baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8' };
    for (const line of unit.get('Environment') ?? []) {
      const [key, ...value] = line.split('=');
      baseEnv[key!] = value.join('=');
    }
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGKILL');
      await once(server, 'exit');
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('npm run db:migrate applies the schema', async () => {
    const result = await withEnv(['npm', 'run', '--silent', 'db:migrate']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\[db:migrate\] applied 001-initial, /);
  });

  it('npm run rebuild builds the site from the new database, search index and render manifest included', { timeout: 120_000 }, async () => {
    const result = await withEnv(['npm', 'run', '--silent', 'rebuild']);
    expect(result.status, result.stdout.slice(-2000) + result.stderr).toBe(0);
    expect(result.stdout).toContain('full build');
    // The server starts on pages it knows are current: no re-check of every page at its first start.
    expect(fs.existsSync(path.join(siteDir, 'render-state.json'))).toBe(true);
    expect(fs.existsSync(path.join(siteDir, 'server/entry.mjs'))).toBe(true);
    // The configuration reached the pages: canonical links on the https address.
    expect(fs.readFileSync(path.join(siteDir, 'client/about/index.html'), 'utf8')).toContain(`https://${SITE_HOST}/about`);
  });

  it('npm run user -- add creates the first admin and prints its password once', async () => {
    const result = await withEnv(['npm', 'run', '--silent', 'user', '--', 'add', 'chief']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('Created admin "chief".');
    adminPassword = /password: (\S+)/.exec(result.stdout)?.[1] ?? '';
    expect(adminPassword.length).toBeGreaterThanOrEqual(12);
  });

  it('npm run doctor passes the configuration', async () => {
    const result = await withEnv(['npm', 'run', '--silent', 'doctor']);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/All \d+ checks passed\./);
  });

  it('the confinement really is read-only outside the writable folders', async () => {
    const probe = path.join(ROOT, '.out', `confined-probe-${process.pid}`);
    const outside = await run('unshare', confined(['sh', '-c', `touch "${probe}"`]), { env: baseEnv });
    expect(outside.status).not.toBe(0);
    expect(outside.stderr).toMatch(/Read-only file system/);
    expect(fs.existsSync(probe)).toBe(false);
    const inside = await run(
      'unshare',
      confined(['sh', '-c', `touch "${dataDir}/probe" "${siteDir}/probe" && rm "${dataDir}/probe" "${siteDir}/probe"`]),
      {
        env: baseEnv,
      },
    );
    expect(inside.status, inside.stderr).toBe(0);
  });

  it("the unit's ExecStart serves in production mode, confined as the unit confines it, and ExecStartPost waits until it is ready", async () => {
    server = spawn('unshare', confined(unitCommand('ExecStart')), { cwd: ROOT, env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    listening = await waitForListening(server, 60_000);
    const ready = await withEnv(unitCommand('ExecStartPost'));
    expect(ready.status, ready.stderr).toBe(0);
    expect(ready.stdout).toContain(`Ready: http://127.0.0.1:${port}`);
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
    // Production mode: nothing seeded, no admin made up, no password in its output.
    const count = (await (await fetch(`http://127.0.0.1:${port}/api/articles/count`)).json()) as { count: number };
    expect(count.count).toBe(0);
    expect(listening.output()).not.toContain(adminPassword);
    expect(listening.output()).not.toMatch(/password:/i);
  });

  describe('behind deploy/nginx-site.conf, in Debian nginx.conf, over https', () => {
    let nginx: RunningNginx;
    let httpPort: number;
    let httpsPort: number;
    let certificate: Buffer;
    let accessLog: string;
    let webroot: string;

    /** One request over https to the site, the certificate checked against the self-signed one. */
    function secure(pathname: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
      return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const request = https.request(
          {
            host: '127.0.0.1',
            port: httpsPort,
            servername: SITE_HOST,
            ca: certificate,
            method: options.method ?? 'GET',
            path: pathname,
            headers: { Host: SITE_HOST, ...options.headers },
            agent: false,
          },
          (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
          },
        );
        request.on('error', reject);
        request.end(options.body);
      });
    }

    function plain(pathname: string) {
      return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port: httpPort, path: pathname, headers: { Host: SITE_HOST }, agent: false }, (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
          })
          .on('error', reject);
      });
    }

    beforeAll(async () => {
      expect(listening, 'the server of the steps above runs').toBeDefined();
      const dir = path.join(work, 'nginx');
      fs.mkdirSync(dir, { mode: 0o755 });
      const certDir = path.join(dir, 'live');
      fs.mkdirSync(certDir);
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
        '-subj', `/CN=${SITE_HOST}`, '-addext', `subjectAltName=DNS:${SITE_HOST}`,
        '-keyout', path.join(certDir, 'privkey.pem'), '-out', path.join(certDir, 'fullchain.pem'),
      ], { stdio: 'pipe' }); // prettier-ignore
      certificate = fs.readFileSync(path.join(certDir, 'fullchain.pem'));
      webroot = path.join(dir, 'webroot');
      fs.mkdirSync(path.join(webroot, '.well-known/acme-challenge'), { recursive: true });
      fs.writeFileSync(path.join(webroot, '.well-known/acme-challenge/challenge-token'), 'challenge-answer');
      accessLog = path.join(dir, 'meridian.access.log');
      httpPort = await freePort();
      httpsPort = await freePort();
      const site = deployConfig('nginx-site.conf', [
        [`include ${INSTALL_DIR}/deploy/nginx/`, `include ${path.join(ROOT, 'deploy/nginx')}/`],
        ['server 127.0.0.1:4321 max_fails=3', `server 127.0.0.1:${port} max_fails=3`],
        ['listen 80;', `listen 127.0.0.1:${httpPort};`],
        ['listen [::]:80;', ''],
        ['listen 443 ssl http2;', `listen 127.0.0.1:${httpsPort} ssl http2;`],
        ['listen [::]:443 ssl http2;', ''],
        ['/var/log/nginx/meridian.access.log', accessLog],
        ['root /var/www/letsencrypt;', `root ${webroot};`],
        [`/etc/letsencrypt/live/${SITE_HOST}/`, `${certDir}/`],
        [`root ${INSTALL_DIR}/dist/client;`, `root ${path.join(siteDir, 'client')};`],
        [`set $meridian_data_dir ${DATA_DIR};`, `set $meridian_data_dir ${dataDir};`],
      ]);
      const siteFile = path.join(dir, 'meridian-site.conf');
      fs.writeFileSync(siteFile, site);
      // Debian's own nginx.conf, with the site enabled in it and nginx's files under a prefix of its own.
      let main = fs.readFileSync('/etc/nginx/nginx.conf', 'utf8');
      for (const [from, to] of [
        ['pid /run/nginx.pid;', 'pid nginx.pid;'],
        // Its modules-enabled/ names modules relative to the default prefix, which -p replaces.
        ['include /etc/nginx/modules-enabled/*.conf;', `load_module ${BROTLI_STATIC};`],
        ['error_log /var/log/nginx/error.log;', 'error_log stderr warn;'],
        ['access_log /var/log/nginx/access.log;', 'access_log off;'],
        ['include /etc/nginx/sites-enabled/*;', `include ${siteFile};`],
        [
          'http {',
          'http {\nclient_body_temp_path client_body;\nproxy_temp_path proxy;\nfastcgi_temp_path fastcgi;\nuwsgi_temp_path uwsgi;\nscgi_temp_path scgi;',
        ],
      ]) {
        expect(main, `/etc/nginx/nginx.conf has "${from}"`).toContain(from);
        main = main.replace(from, to);
      }
      const mainFile = path.join(dir, 'nginx.conf');
      fs.writeFileSync(mainFile, main);
      const test = await run('/usr/sbin/nginx', ['-t', '-e', 'stderr', '-p', `${dir}/`, '-c', mainFile]);
      expect(test.status, test.stderr).toBe(0);
      expect(test.stderr).toContain('test is successful');
      expect(test.stderr.split('\n').filter((line) => /\[(warn|emerg|alert)\]/.test(line) && !line.includes('"user" directive'))).toEqual(
        [],
      );
      nginx = await startNginx(main, httpPort);
    });

    afterAll(async () => {
      await nginx?.stop();
    });

    it('serves a page over https from disk, with HSTS and the security headers', async () => {
      const page = await secure('/about/', { headers: { 'Accept-Encoding': 'gzip' } });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      // The twin from disk (nginx's ETag), not compressed on the fly by Debian's gzip on.
      expect(page.headers['content-encoding']).toBe('gzip');
      expect(page.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
      expect(page.headers['strict-transport-security']).toBe('max-age=63072000');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.headers.server).toBe('nginx');
    });

    it("passes the server's answers with HSTS, and a sign-in behind it gets a Secure cookie", async () => {
      const health = await secure('/api/health');
      expect(health.status).toBe(200);
      expect(health.headers['strict-transport-security']).toBe('max-age=63072000');
      const login = await secure('/api/auth/login', {
        method: 'POST',
        headers: { Origin: `https://${SITE_HOST}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'chief', password: adminPassword }),
      });
      expect(login.status, login.body).toBe(200);
      expect(login.headers['set-cookie']!.some((cookie) => /;\s*Secure/i.test(cookie))).toBe(true);
      expect(login.headers['strict-transport-security']).toBe('max-age=63072000');
    });

    it('speaks HTTP/2', async () => {
      const session = http2.connect(`https://127.0.0.1:${httpsPort}`, { ca: certificate, servername: SITE_HOST });
      try {
        const request = session.request({ ':path': '/about/', ':authority': SITE_HOST });
        request.resume();
        const [headers] = (await once(request, 'response')) as [http2.IncomingHttpHeaders];
        expect(headers[':status']).toBe(200);
        expect(session.alpnProtocol).toBe('h2');
        request.close();
      } finally {
        session.close();
      }
    });

    it('redirects http to https, except the certificate challenges', async () => {
      const redirect = await plain('/about/?from=mail');
      expect(redirect.status).toBe(301);
      expect(redirect.headers.location).toBe(`https://${SITE_HOST}/about/?from=mail`);
      expect(redirect.headers['strict-transport-security']).toBeUndefined();
      const challenge = await plain('/.well-known/acme-challenge/challenge-token');
      expect(challenge.status).toBe(200);
      expect(challenge.body).toBe('challenge-answer');
    });

    it('writes an access log line per request, without query strings or upload tokens', async () => {
      await secure('/api/newsletter/unsubscribe?token=unsubscribe-secret-123');
      await secure('/api/images/upload/upload-secret-456', { method: 'PUT', headers: { Origin: `https://${SITE_HOST}` }, body: 'x' });
      // nginx writes a request's line once it is done with it, which may be just after the client has the answer.
      let log = '';
      for (let tries = 0; tries < 100 && !log.includes('"PUT '); tries++) {
        if (tries) await new Promise((resolve) => setTimeout(resolve, 20));
        log = fs.readFileSync(accessLog, 'utf8');
      }
      expect(log).toMatch(/"GET \/about\/ HTTP\/1\.1" 200 /);
      expect(log).toMatch(/"GET \/about\/ HTTP\/2\.0" 200 /);
      expect(log).toMatch(/"GET \/about\/ HTTP\/1\.1" 301 /);
      expect(log).toMatch(/"GET \/api\/newsletter\/unsubscribe HTTP\/1\.1" \d{3} /);
      expect(log).toMatch(/"PUT \/api\/images\/upload\/- HTTP\/1\.1" \d{3} /);
      expect(log).not.toContain('secret');
      expect(log).not.toContain('from=mail');
    });
  });

  it("stops on SIGTERM with exit code 0 within the unit's TimeoutStopSec", async () => {
    expect(server).toBeDefined();
    const limitMs = Number.parseInt(unit.get('TimeoutStopSec')![0]!, 10) * 1000;
    server!.kill('SIGTERM');
    const exited = once(server!, 'exit').then(([code]) => code as number | null);
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), limitMs).unref());
    expect(await Promise.race([exited, timeout])).toBe(0);
    // Started on the rebuild's render manifest: it never re-checked every page.
    expect(listening!.output()).not.toContain('reconcil');
  });
});
