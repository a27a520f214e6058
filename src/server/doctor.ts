/**
 * `npm run doctor`'s checks of a production configuration: each answers ok or the problem and its fix,
 * reading and probing only (no store lock, no migration), so it runs beside a live server.
 */
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';
import { readPendingMigrations } from '../store/database.ts';
import { isStoreUnavailable, readDataDirLayout, storeWriterPid } from '../store/index.ts';
import { findDataDirProblem, findExistingFolder, findServedDirProblem, findSiteUrlProblem } from './production.ts';

export type CheckResult = { name: string; ok: boolean; detail: string };

export type DoctorInput = {
  config: Config;
  /** The environment the configuration came from (to tell a value set from a default). */
  env: Record<string, string | undefined>;
  /** The build output folder (OUT_DIR): its server bundle. */
  outDir: string;
  /** The folder readers are served from (SERVE_DIR or OUT_DIR/client). */
  servedDir: string;
  /** How long a database or mail server may take to answer. @default 5000 */
  timeoutMs?: number;
};

/** Files every build has: the front page, the error screens, the machine files, the assets folder. */
const BUILD_FILES = ['index.html', '404.html', 'article-404/index.html', 'robots.txt', 'sitemap.xml', 'rss.xml'];

/** Free space under which a file system is reported: pages, images and the store grow on it. */
const MIN_FREE_BYTES = 1024 ** 3;
const MIN_FREE_SHARE = 0.05;

const ok = (name: string, detail: string): CheckResult => ({ name, ok: true, detail });
const problem = (name: string, detail: string): CheckResult => ({ name, ok: false, detail });

/** A URL without its credentials, for a line a journal may keep. */
function describeUrl(value: string): string {
  const url = new URL(value);
  const socket = url.searchParams.get('host');
  return `${url.protocol}//${url.host || socket || 'localhost'}${url.protocol.startsWith('postgres') ? url.pathname : ''}`;
}

/** An error as "CODE: message" (the code alone says ECONNREFUSED, the message says where). */
function describeError(error: unknown): string {
  // The store wraps a refused connection in a "try again" error; the operator needs the reason under it.
  if (isStoreUnavailable(error) && error.cause) return describeError(error.cause);
  const { code, message } = error as NodeJS.ErrnoException;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function checkNode(): CheckResult {
  const major = Number(process.versions.node.split('.')[0]);
  if (major === 24) return ok('Node', `${process.versions.node}`);
  return problem(
    'Node',
    `${process.versions.node} runs this, the project needs 24: run it through npm (npm run ..., which puts node_modules/.bin/node first) or node_modules/.bin/node.`,
  );
}

function checkConfig({ config, env }: DoctorInput): CheckResult[] {
  const siteUrlProblem = findSiteUrlProblem(env);
  const siteUrl = siteUrlProblem
    ? problem('SITE_URL', siteUrlProblem)
    : new URL(config.SITE_URL).protocol !== 'https:'
      ? problem('SITE_URL', `${config.SITE_URL} is not https: set the https address readers use, or session cookies go out without Secure.`)
      : ok('SITE_URL', config.SITE_URL);
  const seed =
    config.SEED === 'demo'
      ? problem('SEED', 'SEED=demo fills an empty store with demo articles: remove it from the environment for a real site.')
      : ok('SEED', 'none (no demo content)');
  const secret = config.APP_SECRET
    ? ok('APP_SECRET', 'set')
    : ok('APP_SECRET', 'not set: generated once and kept in the store (set one with `openssl rand -base64 48` to keep it outside)');
  return [siteUrl, seed, secret];
}

function checkFolders({ config, servedDir }: DoctorInput): CheckResult[] {
  const dataProblem = findDataDirProblem(config.DATA_DIR);
  const servedProblem = findServedDirProblem(servedDir);
  return [
    dataProblem
      ? problem('DATA_DIR', dataProblem)
      : ok(
          'DATA_DIR',
          `${path.resolve(config.DATA_DIR)} ${fs.existsSync(config.DATA_DIR) ? 'is writable' : 'can be made (its parent is writable)'}`,
        ),
    servedProblem ? problem('served folder', servedProblem) : ok('served folder', `${path.resolve(servedDir)} and its parent are writable`),
  ];
}

function checkBuild({ outDir, servedDir }: DoctorInput): CheckResult {
  const missing = BUILD_FILES.filter((file) => !fs.existsSync(path.join(servedDir, file)));
  const assets = path.join(servedDir, '_astro');
  if (!fs.existsSync(assets) || fs.readdirSync(assets).length === 0) missing.push('_astro/');
  if (!fs.existsSync(path.join(outDir, 'server/entry.mjs')))
    missing.push(path.join(path.relative(path.dirname(servedDir), outDir) || '.', 'server/entry.mjs'));
  if (missing.length === 0) return ok('build', `${path.resolve(servedDir)} has the pages and assets of a build`);
  return problem(
    'build',
    `The build is incomplete (missing ${missing.join(', ')}): run \`npm run rebuild\` as the server's user, then restart the server.`,
  );
}

async function checkStore({ config, timeoutMs = 5000 }: DoctorInput): Promise<CheckResult> {
  if (config.DATABASE_URL) {
    const where = describeUrl(config.DATABASE_URL);
    try {
      const { pending, applied } = await readPendingMigrations(config.DATABASE_URL, timeoutMs);
      if (pending.length)
        return problem('store', `PostgreSQL at ${where} lacks migrations ${pending.join(', ')}: run \`npm run db:migrate\`.`);
      return ok('store', `PostgreSQL at ${where} answers, ${applied} migrations applied`);
    } catch (error) {
      return problem(
        'store',
        `PostgreSQL at ${where} failed (${describeError(error)}): check DATABASE_URL and that PostgreSQL runs and lets this user in.`,
      );
    }
  }
  const dir = path.resolve(config.DATA_DIR);
  try {
    if (fs.existsSync(dir)) fs.readdirSync(dir);
    const layout = readDataDirLayout(dir);
    const writer = storeWriterPid(dir);
    const held = writer ? `, open in a running server (pid ${writer})` : '';
    if (layout === 'fresh') return ok('store', `lowdb in ${dir}: empty, made at the first start${held}`);
    if (layout === 'legacy') return ok('store', `lowdb in ${dir}: layout 1, migrated at the next start (back it up first)${held}`);
    return ok('store', `lowdb in ${dir}: current layout${held}`);
  } catch (error) {
    return problem('store', `lowdb in ${dir} cannot be read (${(error as Error).message}): check DATA_DIR and its owner.`);
  }
}

async function checkMail({ config, timeoutMs = 5000 }: DoctorInput): Promise<CheckResult> {
  if (!config.SMTP_URL)
    return ok('SMTP', `not set: mail is written to ${path.join(path.resolve(config.DATA_DIR), 'outbox')}/, nothing is sent`);
  const where = describeUrl(config.SMTP_URL);
  const transport = nodemailer.createTransport({
    url: config.SMTP_URL,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    await transport.verify();
    return ok('SMTP', `${where} answers and accepts the credentials`);
  } catch (error) {
    return problem('SMTP', `${where} failed (${describeError(error)}): check SMTP_URL and that the mail server runs.`);
  } finally {
    transport.close();
  }
}

function checkDisk({ config, servedDir }: DoctorInput): CheckResult[] {
  // One line per file system: folders on the same disk share its space.
  const byDevice = new Map<number, { folder: string; names: string[] }>();
  for (const [name, folder] of [
    ['DATA_DIR', findExistingFolder(config.DATA_DIR)],
    ['served folder', findExistingFolder(path.dirname(path.resolve(servedDir)))],
  ] as const) {
    const device = fs.statSync(folder).dev;
    const entry = byDevice.get(device);
    if (entry) entry.names.push(name);
    else byDevice.set(device, { folder, names: [name] });
  }
  return [...byDevice.values()].map(({ folder, names }) => {
    const stats = fs.statfsSync(folder);
    const free = stats.bavail * stats.bsize;
    const total = stats.blocks * stats.bsize;
    const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
    const shown = `${gib(free)} free of ${gib(total)} (${((free / total) * 100).toFixed(0)}%) at ${folder}`;
    const name = `disk (${names.join(', ')})`;
    if (free < MIN_FREE_BYTES || free / total < MIN_FREE_SHARE)
      return problem(name, `${shown}: free space (at least 1 GiB and 5%) before pages, images or the store fail to write.`);
    return ok(name, shown);
  });
}

/** Every check, in the order they are printed. */
export async function runDoctorChecks(input: DoctorInput): Promise<CheckResult[]> {
  const [store, mail] = await Promise.all([checkStore(input), checkMail(input)]);
  return [checkNode(), ...checkConfig(input), ...checkFolders(input), checkBuild(input), store, mail, ...checkDisk(input)];
}
