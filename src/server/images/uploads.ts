/** Receiving a PUT to a one-time upload URL: checks, then the raw body streamed to a temp file under DATA_DIR. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { AppError, isAppError } from '../errors.ts';
import type { Runtime } from '../runtime.ts';
import { checkUploadUrl, uploadDirs } from './upload-urls.ts';

/** The largest image accepted (DECISIONS.md: at most 10 MB). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const TOO_LARGE = 'The image is larger than 10 MB';

export type UploadRequest = {
  token: string;
  expires: string | null;
  sig: string | null;
  contentType: string | null;
  contentLength: string | null;
  body: ReadableStream<Uint8Array> | null;
};

/**
 * Passes bytes through up to `max`, then drops the rest while still reading it: the client gets its
 * 413 after sending, on a connection that stays usable (cutting the stream off mid-upload leaves the
 * client writing into a dead socket).
 */
function byteLimit(max: number): Transform & { overflowed: () => boolean } {
  let seen = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > max) callback();
      else callback(null, chunk);
    },
  });
  return Object.assign(transform, { overflowed: () => seen > max });
}

/**
 * Stores an upload: 403 for a forged URL, 410 for an expired or used one, 415 for a body that is not
 * an image type (SVG included), 413 above MAX_IMAGE_BYTES (and nothing kept).
 */
export async function receiveUpload(runtime: Runtime, request: UploadRequest): Promise<void> {
  const check = await checkUploadUrl(runtime, request.token, request.expires, request.sig);
  if (check === 'forged') throw new AppError(403, 'This upload URL is not valid');
  if (check === 'expired') throw new AppError(410, 'This upload URL has expired; request a new one');
  const type = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!/^image\/[a-z0-9.+-]+$/.test(type) || type === 'image/svg+xml') {
    throw new AppError(415, 'Expected an image (Content-Type image/jpeg, image/png, image/webp, image/avif or image/gif)');
  }
  const declared = Number(request.contentLength ?? '');
  if (Number.isFinite(declared) && declared > MAX_IMAGE_BYTES) throw new AppError(413, TOO_LARGE);
  if (!request.body) throw new AppError(400, 'The upload is empty');

  const { uploads, claims } = uploadDirs(runtime);
  await fsp.mkdir(uploads, { recursive: true });
  await fsp.mkdir(claims, { recursive: true });
  // Creating the claim with 'wx' is atomic: of two PUTs to one URL, exactly one gets past here.
  try {
    await (await fsp.open(path.join(claims, request.token), 'wx')).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new AppError(410, 'This upload URL has already been used; request a new one');
    throw error;
  }
  const target = path.join(uploads, request.token);
  const partial = path.join(uploads, `.${request.token}.${randomBytes(6).toString('hex')}.part`);
  const limit = byteLimit(MAX_IMAGE_BYTES);
  try {
    await pipeline(Readable.fromWeb(request.body as WebReadableStream<Uint8Array>), limit, fs.createWriteStream(partial, { flags: 'wx' }));
    if (limit.overflowed()) throw new AppError(413, TOO_LARGE);
    const { size } = await fsp.stat(partial);
    if (size === 0) throw new AppError(400, 'The upload is empty');
    await fsp.rename(partial, target);
  } catch (error) {
    await fsp.rm(partial, { force: true });
    if (isAppError(error)) throw error;
    // The body was cut off (the adapter's own size limit, or the client gave up): this connection is done.
    if (limit.overflowed()) throw new AppError(413, TOO_LARGE, { headers: { Connection: 'close' }, cause: error });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || (error as Error).name === 'AbortError') {
      throw new AppError(400, 'The upload was interrupted', { headers: { Connection: 'close' }, cause: error });
    }
    throw error;
  }
}

/** The stored bytes of an upload, or undefined when nothing was uploaded to that token. */
export async function readUpload(runtime: Runtime, token: string): Promise<Buffer | undefined> {
  try {
    return await fsp.readFile(path.join(uploadDirs(runtime).uploads, token));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Deletes an upload once it has been normalised (its claim stays, so the URL stays used). */
export async function deleteUpload(runtime: Runtime, token: string): Promise<void> {
  await fsp.rm(path.join(uploadDirs(runtime).uploads, token), { force: true });
}
