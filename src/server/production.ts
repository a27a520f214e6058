/** Production mode's refusals (`npm run serve`, the systemd unit), shared with `npm run doctor`: one sentence each, with its fix. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseConfig, type Config } from '../config.ts';

/** The configuration as production mode reads it: demo content only when SEED=demo is explicit. */
export function parseProductionConfig(env: Record<string, string | undefined> = process.env): Config {
  return parseConfig({ ...env, SEED: env.SEED || 'none' });
}

/** Why SITE_URL cannot serve production, or undefined: it must be set, since its default names localhost. */
export function findSiteUrlProblem(env: Record<string, string | undefined> = process.env): string | undefined {
  if (env.SITE_URL) return undefined;
  return 'SITE_URL is not set: set it to the address readers use (e.g. SITE_URL=https://news.example in the environment file), since links, feeds and cookies are made from it.';
}

/** The folder itself, or the nearest ancestor that exists (where a missing folder would be created). */
export function findExistingFolder(folder: string): string {
  let current = path.resolve(folder);
  while (!fs.existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/**
 * Whether this process can create a file in `folder` (or, when it does not exist yet, in the nearest
 * ancestor it would be created in): a real write, since permission bits say nothing for root, and a
 * read-only mount, an immutable folder or a file in the path only show when one tries.
 * Answers the error code of the failed attempt, or undefined when it can.
 */
export function probeWritable(folder: string): string | undefined {
  const target = findExistingFolder(folder);
  if (!fs.statSync(target).isDirectory()) return 'ENOTDIR';
  const probe = path.join(target, `.write-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    fs.closeSync(fs.openSync(probe, 'wx'));
    fs.unlinkSync(probe);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EIO';
  }
}

/** Why the server could not write DATA_DIR, or undefined. */
export function findDataDirProblem(dataDir: string): string | undefined {
  const code = probeWritable(dataDir);
  if (!code) return undefined;
  const folder = path.resolve(dataDir);
  return `DATA_DIR (${folder}) is not writable (${code}): point DATA_DIR at a folder the server's user owns, e.g. \`install -d -o meridian -g meridian ${folder}\`.`;
}

/**
 * Why the server could not serve and regenerate `servedDir`, or undefined: the folder must hold a build
 * and be writable (the worker renders pages into it), and so must its parent (render state, locks).
 */
export function findServedDirProblem(servedDir: string): string | undefined {
  const folder = path.resolve(servedDir);
  if (!fs.existsSync(folder))
    return `The served folder (${folder}) does not exist: run \`npm run rebuild\`, or point SERVE_DIR at a copy of the build's client folder.`;
  for (const [name, target] of [
    ['The served folder', folder],
    ["The served folder's parent", path.dirname(folder)],
  ] as const) {
    const code = probeWritable(target);
    if (code)
      return `${name} (${target}) is not writable (${code}): give the server's user write access to it, e.g. \`chown -R meridian: ${target}\`.`;
  }
  return undefined;
}

/** The first reason production mode refuses to start, checked before the store or the served folder is opened. */
export function findProductionProblem(
  env: Record<string, string | undefined>,
  folders: { dataDir: string; servedDir: string },
): string | undefined {
  return findSiteUrlProblem(env) ?? findDataDirProblem(folders.dataDir) ?? findServedDirProblem(folders.servedDir);
}
