/** Whether dist/ is current: built from the present sources and from the present data. */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { buildOutDir, parseConfig } from '../src/config.ts';
import { manifestFileFor, manifestMatches, readRenderManifest, writeRenderManifest } from '../src/server/publishing/manifest.ts';
import { migrateRenderState, renderStateFileFor, updateRenderStateHeader } from '../src/server/publishing/render-state.ts';
import { takeRenderJournal } from '../src/server/publishing/render-journal.ts';

/** The build output folder (OUT_DIR, default dist), inside the project or an OutDirError (see buildOutDir). */
export function outDirOf(root: string): string {
  return buildOutDir(root);
}

/**
 * The folder readers are served from and the worker regenerates into. SERVE_DIR gives a server a
 * folder of its own (tests give each server a copy of the built pages). @default OUT_DIR/client
 */
export function serveDirOf(root: string): string {
  return process.env.SERVE_DIR ? path.resolve(process.env.SERVE_DIR) : path.join(outDirOf(root), 'client');
}

/**
 * What OUT_DIR's build was made from: the sources' newest mtime (`npm start`'s check), the data it
 * prerendered, and the render fingerprint of its bundle (`render`, absent in older builds), which the
 * server compares with what the served pages were drawn with.
 */
export type BuildInfo = { sourceStamp: number; storeId: string; storeVersion: number; render?: string };

/** Calls `onFile` for every file under the given entries of the project, in a stable (sorted) order. */
function visitFiles(root: string, entries: readonly string[], onFile: (file: string, stat: fs.Stats) => void): void {
  const visit = (target: string) => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(target);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(target).sort()) visit(path.join(target, entry));
    } else {
      onFile(target, stat);
    }
  };
  for (const entry of entries) visit(path.join(root, entry));
}

/** Newest modification time among the files the build compiles. */
export function sourceStamp(root: string): number {
  let newest = 0;
  visitFiles(root, ['src', 'public', 'astro.config.ts', 'package.json', 'tsconfig.json'], (_file, stat) => {
    newest = Math.max(newest, stat.mtimeMs);
  });
  return Math.floor(newest);
}

/**
 * Fingerprint of everything a page's HTML depends on besides its data: the sources, templates and
 * static files the build compiles, the locked dependencies, and the site settings the pages print.
 * The incremental rebuild renders through the current build, so another fingerprint means a full one.
 */
export function buildFingerprint(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const digest = createHash('sha256');
  visitFiles(root, ['src', 'public', 'astro.config.ts', 'package-lock.json', 'tsconfig.json'], (file) => {
    digest.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  });
  digest.update(JSON.stringify(siteSettingsOf(env)));
  return digest.digest('base64url').slice(0, 32);
}

/** The settings the pages print (a new value changes every page). */
export function siteSettingsOf(env: NodeJS.ProcessEnv): string[] {
  const config = parseConfig(env);
  return [config.SITE_URL, config.SITE_NAME, config.SITE_EMAIL, config.SITE_TWITTER];
}

export function readBuildInfo(root: string): BuildInfo | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(outDirOf(root), '.build-info.json'), 'utf8')) as BuildInfo;
  } catch {
    return undefined;
  }
}

/** Records what the build in `outDir` was made from (see BuildInfo). */
export function writeBuildInfo(outDir: string, info: BuildInfo): void {
  fs.writeFileSync(path.join(outDir, '.build-info.json'), JSON.stringify(info));
}

/** Whether the build in OUT_DIR was made from the sources as they are now (none newer than its stamp). */
export function builtFromCurrentSources(root: string, info: BuildInfo): boolean {
  return info.sourceStamp >= sourceStamp(root);
}

export function needsBuild(root: string, store: { id: string; version: number }): string | undefined {
  if (!fs.existsSync(path.join(outDirOf(root), 'server/entry.mjs'))) return 'no build yet';
  const info = readBuildInfo(root);
  if (!info) return 'no build info';
  if (!builtFromCurrentSources(root, info)) return 'sources changed';
  // The server's worker keeps the pages current and records it in the render manifest.
  migrateRenderState(path.join(outDirOf(root), 'client'));
  if (manifestMatches(readRenderManifest(manifestFileFor(path.join(outDirOf(root), 'client'))), store, parseConfig().SITE_URL))
    return undefined;
  if (info.storeId !== store.id || info.storeVersion !== store.version) return 'data changed';
  return undefined;
}

/** Runs `astro build` against DATA_DIR and records what it was built from; `render`: its render fingerprint. */
export function runBuild(root: string, env: NodeJS.ProcessEnv, store: { id: string; version: number }, render?: string): void {
  const stamp = sourceStamp(root);
  execFileSync(process.execPath, [path.join(root, 'node_modules/astro/bin/astro.mjs'), 'build'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...env, NODE_ENV: 'production' },
  });
  const info: BuildInfo = { sourceStamp: stamp, storeId: store.id, storeVersion: store.version, ...(render ? { render } : {}) };
  // Every page was just rewritten without per-page fingerprints: the next `npm run rebuild` is a full one.
  fs.rmSync(renderStateFileFor(path.join(outDirOf(root), 'client')), { force: true });
  takeRenderJournal(path.join(outDirOf(root), 'client')).discard();
  writeBuildInfo(outDirOf(root), info);
  // The pages now reflect this store at this version; the server compares it on start (stale check).
  writeRenderManifest(manifestFileFor(path.join(outDirOf(root), 'client')), {
    storeId: store.id,
    version: store.version,
    renderedAt: new Date().toISOString(),
    by: 'build',
    siteUrl: parseConfig(env).SITE_URL,
  });
  // Every page was drawn by this build: a start on it re-renders nothing for the code.
  if (render)
    updateRenderStateHeader(renderStateFileFor(path.join(outDirOf(root), 'client')), (header) => ({ ...header, drawnWith: render }));
}
