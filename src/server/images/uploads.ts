/** Receiving a PUT to a one-time upload URL: checks, then the raw body streamed to a temp file under DATA_DIR. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors.ts';
import type { Runtime } from '../runtime.ts';
import { checkUploadUrl, uploadDirs } from './upload-urls.ts';
import { isStorageFault } from '../storage-faults.ts';

/** The largest image accepted (docs/decisions.md, Images: at most 10 MB). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const IMAGE_TOO_LARGE = 'The image is larger than 10 MB';
/** How long a used URL's claim is kept in a shared store: past the URL's expiry (UPLOAD_URL_TTL_MS, 10 minutes). */
const CLAIM_KEPT_MS = 60 * 60 * 1000;

/** What the edge hands over of a PUT to an upload URL: the URL's parts, the parsed headers, and the body. */
export type UploadRequest = {
  token: string;
  expires: string | null;
  sig: string | null;
  /** The media type of the body, lowercased, without parameters ('' when none was sent). */
  mediaType: string;
  /** The declared length in bytes, when the client declared one. */
  declaredBytes: number | undefined;
  /** The body, already held to MAX_IMAGE_BYTES by the edge (it fails with a 413 past it), or null when there is none. */
  body: Readable | null;
};

/**
 * Stores an upload: 403 for a forged URL, 410 for an expired or used one, 415 for a body that is not
 * an image type (SVG included), 413 above MAX_IMAGE_BYTES (and nothing kept).
 */
export async function receiveUpload(runtime: Runtime, request: UploadRequest): Promise<void> {
  const check = await checkUploadUrl(runtime, request.token, request.expires, request.sig);
  if (check === 'forged') throw new AppError(403, 'This upload URL is not valid');
  if (check === 'expired') throw new AppError(410, 'This upload URL has expired; request a new one');
  const type = request.mediaType;
  if (!/^image\/[a-z0-9.+-]+$/.test(type) || type === 'image/svg+xml') {
    throw new AppError(415, 'Expected an image (Content-Type image/jpeg, image/png, image/webp, image/avif or image/gif)');
  }
  if (request.declaredBytes !== undefined && request.declaredBytes > MAX_IMAGE_BYTES) throw new AppError(413, IMAGE_TOO_LARGE);
  if (!request.body) throw new AppError(400, 'The upload is empty');

  const { uploads, claims } = uploadDirs(runtime);
  await fsp.mkdir(uploads, { recursive: true });
  await fsp.mkdir(claims, { recursive: true });
  // Several servers on one database: the claim is a counter in the store first, so a URL is used once
  // whichever server each PUT reaches (held as long as the local claim file lives).
  if (
    runtime.store.pages.shared &&
    (await runtime.store.limits.hit(`upload-claim:${request.token}`, CLAIM_KEPT_MS, Date.now())).count > 1
  ) {
    throw new AppError(410, 'This upload URL has already been used; request a new one');
  }
  // Creating the claim with 'wx' is atomic: of two PUTs to one URL, exactly one gets past here.
  const claim = path.join(claims, request.token);
  try {
    await (await fsp.open(claim, 'wx')).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new AppError(410, 'This upload URL has already been used; request a new one');
    throw error;
  }
  const target = path.join(uploads, request.token);
  const partial = path.join(uploads, `.${request.token}.${randomBytes(6).toString('hex')}.part`);
  try {
    // The body's own failures (too large, cut off) arrive here as AppErrors; nothing partial is kept.
    await pipeline(request.body, fs.createWriteStream(partial, { flags: 'wx' }));
    const { size } = await fsp.stat(partial);
    if (size === 0) throw new AppError(400, 'The upload is empty');
    await fsp.rename(partial, target);
    // ...and its bytes in the store, for the server the normalize request reaches (not copied to the others' folders).
    if (runtime.store.pages.shared) await runtime.store.pages.put(uploadKey(request.token), await fsp.readFile(target), 'upload');
  } catch (error) {
    await fsp.rm(partial, { force: true });
    // A full disk stored nothing: the URL stays unused, so the editor's retry (the 503's Retry-After) can use it.
    if (isStorageFault(error)) {
      await fsp.rm(target, { force: true });
      await fsp.rm(claim, { force: true });
      if (runtime.store.pages.shared) await runtime.store.limits.delete(`upload-claim:${request.token}`).catch(() => {});
    }
    throw error;
  }
}

/** The stored bytes of an upload, or undefined when nothing was uploaded to that token. */
export async function readUpload(runtime: Runtime, token: string): Promise<Buffer | undefined> {
  try {
    return await fsp.readFile(path.join(uploadDirs(runtime).uploads, token));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      // Uploaded through another server: its bytes are in the store.
      const stored = runtime.store.pages.shared ? await runtime.store.pages.get(uploadKey(token)) : undefined;
      return stored?.body && Buffer.from(stored.body);
    }
    throw error;
  }
}

/** Deletes an upload once it has been normalised (its claim stays, so the URL stays used). */
export async function deleteUpload(runtime: Runtime, token: string): Promise<void> {
  await fsp.rm(path.join(uploadDirs(runtime).uploads, token), { force: true });
  if (runtime.store.pages.shared) await runtime.store.pages.put(uploadKey(token), undefined, 'upload');
}

/** Where a pending upload's bytes are kept in a shared store (never a served path). */
export function uploadKey(token: string): string {
  return `/uploads/${token}`;
}
