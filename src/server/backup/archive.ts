/**
 * The backup archive: one .tar.gz whose first entry is a manifest naming every other file with its
 * size and SHA-256. Written under a temp name and renamed once complete and on disk; read back whole
 * and checked entry by entry before anything is used.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { createGzip } from 'node:zlib';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Pack, Parser, type ReadEntry } from 'tar';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, MANIFEST_NAME, backupManifestSchema, type BackupManifest } from '../../schemas/backup.ts';

/** A refusal: the archive is foreign or damaged, or the target is not one a restore may change. The message is one sentence. */
export class BackupRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupRefusedError';
  }
}

/** Progress of a long step: `done` of `total` files, `bytes` so far. */
export type Progress = (step: string, done: number, total: number) => void;

/** A manifest's largest size read back (300 bytes a file: a million files). */
const MAX_MANIFEST_BYTES = 300 * 1024 * 1024;

/** Files up to this size are read whole to be hashed (a stream per small file costs more than its read). */
const READ_WHOLE_BYTES = 4 * 1024 * 1024;

async function sha256Of(file: string, size: number): Promise<string> {
  if (size <= READ_WHOLE_BYTES)
    return createHash('sha256')
      .update(await fsp.readFile(file))
      .digest('hex');
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * A test hook: MERIDIAN_BACKUP_PAUSE=archive holds the archive after its first compressed bytes are
 * written (so a test can SIGKILL a backup halfway); otherwise a pass-through.
 */
function holdHalfway(): Transform {
  const hold = process.env.MERIDIAN_BACKUP_PAUSE === 'archive';
  let passed = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!hold || !passed) {
        passed = true;
        return done(null, chunk);
      }
      console.log('[backup] paused halfway through the archive (MERIDIAN_BACKUP_PAUSE)');
    },
  });
}

/** Flushes a file or folder to disk (a rename is only durable once its folder is). */
async function syncPath(target: string): Promise<void> {
  const handle = await fsp.open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes the archive of `root` (the manifest first, then `files`, paths relative to it) to `file`:
 * into a temp name beside it, fsynced, then renamed, so a process killed halfway leaves no file at
 * `file`, only a `.partial` one (removed by the next scheduled backup).
 */
export async function writeArchive(
  file: string,
  root: string,
  files: readonly { path: string; size: number }[],
  manifest: Omit<BackupManifest, 'files' | 'format' | 'formatVersion'>,
  onProgress?: Progress,
): Promise<BackupManifest> {
  const listed: BackupManifest['files'] = files.map((entry) => ({ path: entry.path, size: entry.size, sha256: '' }));
  let done = 0;
  let next = 0;
  // A few reads at a time: small files cost their round trips through the thread pool more than their bytes.
  const hashNext = async () => {
    while (next < listed.length) {
      const entry = listed[next++]!;
      entry.sha256 = await sha256Of(path.join(root, entry.path), entry.size);
      onProgress?.('checksums', ++done, files.length);
    }
  };
  await Promise.all(Array.from({ length: 8 }, hashNext));
  // Checked as a restore will check it: a manifest it would refuse is never written.
  const full = backupManifestSchema.parse({ format: BACKUP_FORMAT, formatVersion: BACKUP_FORMAT_VERSION, ...manifest, files: listed });
  await fsp.writeFile(path.join(root, MANIFEST_NAME), JSON.stringify(full));
  const target = path.resolve(file);
  await fsp.mkdir(path.dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  let written = 0;
  try {
    // Compressed by node's zlib, off the event loop (tar's own gzip runs on it), as a scheduled backup runs inside the server.
    const pack = new Pack({
      cwd: root,
      portable: true,
      jobs: 8,
      onWriteEntry: (entry) => {
        if (entry.path !== MANIFEST_NAME) onProgress?.('archive', ++written, files.length);
      },
    });
    const output = fs.createWriteStream(partial);
    const finished = pipeline(pack as unknown as NodeJS.ReadableStream, createGzip(), holdHalfway(), output);
    for (const name of [MANIFEST_NAME, ...files.map((f) => f.path)]) pack.add(name);
    pack.end();
    await finished;
    await syncPath(partial);
    await fsp.rename(partial, target);
    await syncPath(path.dirname(target));
  } catch (error) {
    await fsp.rm(partial, { force: true });
    throw error;
  }
  return full;
}

/** Where a restore puts each verified entry, decided from the manifest (or a refusal). */
export type ExtractPlan = (
  manifest: BackupManifest,
) => Promise<(entryPath: string) => string | undefined> | ((entryPath: string) => string | undefined);

/** Reads the whole body of an entry (the manifest). */
function readBody(entry: ReadEntry, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    entry.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    entry.on('end', () =>
      size > limit
        ? reject(new BackupRefusedError('its manifest is larger than any Meridian backup writes'))
        : resolve(Buffer.concat(chunks)),
    );
    entry.on('error', reject);
  });
}

/**
 * Reads the archive at `file` once, from start to end: the manifest first (else it is foreign), then
 * every entry, each checked against the manifest (size, SHA-256, listed once) and written where
 * `plan` says. Any damage, a missing entry or one too many is a BackupRefusedError; what was written
 * is the caller's to remove. Answers the manifest.
 */
export async function readArchive(file: string, plan: ExtractPlan, onProgress?: Progress): Promise<BackupManifest> {
  const name = path.basename(file);
  let manifest: BackupManifest | undefined;
  let placeOf: ((entryPath: string) => string | undefined) | undefined;
  const expected = new Map<string, { size: number; sha256: string }>();
  const seen = new Set<string>();
  let failure: Error | undefined;
  let first = true;
  let chain: Promise<void> = Promise.resolve();
  const fail = (error: Error) => {
    failure ??= error;
  };
  let abortEntry: ((error: Error) => void) | undefined;

  const parser = new Parser({
    strict: true,
    onReadEntry: (entry) => {
      const isFirst = first;
      first = false;
      if (failure) return void entry.resume();
      if (isFirst) {
        if (entry.path !== MANIFEST_NAME || entry.type !== 'File') {
          fail(
            new BackupRefusedError(
              `${name} is not a Meridian backup: its first entry is ${JSON.stringify(entry.path)}, not ${MANIFEST_NAME}.`,
            ),
          );
          return void entry.resume();
        }
        // Entries after it wait for the plan: the parser holds its data until each entry is read.
        chain = readBody(entry, MAX_MANIFEST_BYTES).then(async (bytes) => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(bytes.toString('utf8'));
          } catch {
            throw new BackupRefusedError(`${name} is not a Meridian backup: its manifest is not JSON.`);
          }
          const format = (parsed as { format?: unknown; formatVersion?: unknown } | null)?.format;
          const version = (parsed as { formatVersion?: unknown } | null)?.formatVersion;
          if (format !== BACKUP_FORMAT)
            throw new BackupRefusedError(`${name} is not a Meridian backup: its manifest names no "${BACKUP_FORMAT}" format.`);
          if (typeof version === 'number' && version > BACKUP_FORMAT_VERSION)
            throw new BackupRefusedError(
              `${name} was written by a newer Meridian (backup format ${version}; this one reads ${BACKUP_FORMAT_VERSION}): restore it with that version.`,
            );
          const checked = backupManifestSchema.safeParse(parsed);
          if (!checked.success)
            throw new BackupRefusedError(
              `${name} is damaged: its manifest does not describe a backup (${checked.error.issues[0]?.message}).`,
            );
          manifest = checked.data;
          for (const listed of manifest.files) expected.set(listed.path, listed);
          placeOf = await plan(manifest);
        });
        chain.catch(fail);
        return;
      }
      const entryPath = entry.path;
      // After a failure every entry is still read to its end: the parser waits for each one before the next.
      chain = chain
        .catch(() => {})
        .then(() => checkEntry(entry, entryPath))
        .catch((error: unknown) => {
          entry.resume();
          throw error;
        });
      chain.catch(fail);
    },
  });

  async function checkEntry(entry: ReadEntry, entryPath: string): Promise<void> {
    if (failure) return void entry.resume();
    const listed = expected.get(entryPath);
    if (!listed || seen.has(entryPath) || entry.type !== 'File') {
      entry.resume();
      throw new BackupRefusedError(
        `${name} is damaged: it holds ${JSON.stringify(entryPath)}, which its manifest does not list (once, as a file).`,
      );
    }
    seen.add(entryPath);
    const hash = createHash('sha256');
    let size = 0;
    const target = placeOf!(entryPath);
    // One consumer of the entry, so no chunk passes before both the checksum and the file see it.
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    // Its error is the pipeline's below (and the parser's failure, when that ended it first).
    counted.on('error', () => {});
    entry.on('error', (error: unknown) => counted.destroy(error as Error));
    // A damaged stream ends the parser, not the entry being read (it would wait for its end for ever): it is ended here instead.
    abortEntry = (error) => counted.destroy(error);
    if (target) await fsp.mkdir(path.dirname(target), { recursive: true });
    if (failure) counted.destroy(failure);
    entry.pipe(counted);
    const sink = target ? fs.createWriteStream(target, { flags: 'wx' }) : new Writable({ write: (_chunk, _encoding, done) => done() });
    await pipeline(counted, sink);
    if (size !== listed.size || hash.digest('hex') !== listed.sha256)
      throw new BackupRefusedError(`${name} is damaged: ${entryPath} does not match its checksum in the manifest.`);
    onProgress?.('verify', seen.size, expected.size);
  }

  const ended = new Promise<void>((resolve) => {
    parser.on('error', (error: Error) => {
      abortEntry?.(error);
      fail(new BackupRefusedError(`${name} is damaged or not a backup archive (${(error.message || String(error)).replace(/\.$/, '')}).`));
      resolve();
    });
    parser.on('end', () => resolve());
    parser.on('close', () => resolve());
  });
  const input = fs.createReadStream(file);
  input.on('error', (error) => {
    fail(error);
    parser.abort(error);
  });
  input.pipe(parser as unknown as NodeJS.WritableStream);
  await ended;
  await chain.catch(() => {});
  if (failure) throw failure;
  if (!manifest) throw new BackupRefusedError(`${name} is not a Meridian backup archive (no ${MANIFEST_NAME} in it).`);
  const missing = manifest.files.filter((f) => !seen.has(f.path));
  if (missing.length > 0)
    throw new BackupRefusedError(
      `${name} is damaged: it ends before ${missing.length} of its ${manifest.files.length} files (${missing[0]!.path} first).`,
    );
  return manifest;
}
