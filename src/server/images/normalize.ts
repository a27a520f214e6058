/**
 * The image pipeline: an uploaded file or a remote image URL becomes hero images in the shared
 * convention (src/schemas/image.ts): WebP at each HERO_WIDTHS width, 16:9 cover crop, under
 * DATA_DIR/images/{hash}/, hash = the first 32 hex chars of the sha256 of the largest output.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Sharp, SharpOptions } from 'sharp';
import { HERO_ASPECT, HERO_WIDTHS, heroImagePath } from '../../schemas/image.ts';
import { AppError, badRequest } from '../errors.ts';
import { safeFetch, SafeFetchError } from '../net/safe-fetch.ts';
import { userAgentFor } from '../ingest/feed-fetch.ts';
import type { Runtime } from '../runtime.ts';
import { MAX_IMAGE_BYTES, deleteUpload, readUpload } from './uploads.ts';
import { UPLOAD_PATH, checkUploadUrl } from './upload-urls.ts';
import { isStorageFault } from '../storage-faults.ts';

/** Decoding bombs stop here (docs/decisions.md, Images: at most 40 megapixels). */
export const MAX_INPUT_PIXELS = 40_000_000;
const WEBP_QUALITY = 80;

type SharpFactory = (input?: Buffer, options?: SharpOptions) => Sharp;

export class ImageProcessorMissingError extends Error {
  constructor(cause: unknown) {
    super('The image processor (sharp) is not installed or failed to load; run `npm install` on this machine', { cause });
    this.name = 'ImageProcessorMissingError';
  }
}

let sharpModule: Promise<SharpFactory> | undefined;

/** sharp is a native module of ~30 MB: loaded on the first image, not at server start. */
function loadSharp(): Promise<SharpFactory> {
  sharpModule ??= import('sharp').then(
    (mod) => mod.default as unknown as SharpFactory,
    (error: unknown) => {
      sharpModule = undefined;
      throw new ImageProcessorMissingError(error);
    },
  );
  return sharpModule;
}

/** Formats accepted by sniffing the decoded data (never the name or the declared type). AVIF reads as heif/av1. */
function isAcceptedFormat(format: string | undefined, compression: string | undefined): boolean {
  if (format === 'jpeg' || format === 'png' || format === 'webp' || format === 'gif') return true;
  return format === 'heif' && compression === 'av1';
}

const UNSUPPORTED = 'Unsupported image: only JPEG, PNG, WebP, AVIF and GIF are accepted';

/** Writes a file under a temp name and renames it, so a reader never sees half a file. */
async function writeAtomically(file: string, data: Buffer): Promise<void> {
  // A dot name: the static image server never serves dotfiles.
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.writeFile(temp, data);
    await fs.rename(temp, file);
  } catch (error) {
    // A full disk: no partial temp file keeps the space.
    await fs.rm(temp, { force: true });
    throw error;
  }
}

async function allExist(files: string[]): Promise<boolean> {
  for (const file of files) {
    try {
      await fs.access(file);
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Decodes and re-encodes an image: auto-oriented, metadata stripped (sharp writes none unless
 * asked), cropped to 16:9 at each width. Answers the public path of the largest width.
 */
export async function processImage(runtime: Runtime, input: Buffer): Promise<string> {
  const sharp = await loadSharp();
  const options: SharpOptions = { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' };
  let metadata;
  try {
    metadata = await sharp(input, options).metadata();
  } catch (error) {
    if (/pixel limit/i.test((error as Error).message)) throw new AppError(400, 'The image is larger than 40 megapixels', { cause: error });
    throw new AppError(415, UNSUPPORTED, { cause: error });
  }
  if (!isAcceptedFormat(metadata.format, metadata.compression))
    throw new AppError(415, `${UNSUPPORTED} (got ${metadata.format ?? 'unknown'})`);
  if ((metadata.width ?? 0) * (metadata.height ?? 0) > MAX_INPUT_PIXELS) throw badRequest('The image is larger than 40 megapixels');

  const outputs = new Map<number, Buffer>();
  try {
    const decoded = sharp(input, options).autoOrient();
    for (const width of HERO_WIDTHS) {
      const height = Math.round((width * HERO_ASPECT.height) / HERO_ASPECT.width);
      outputs.set(
        width,
        await decoded.clone().resize(width, height, { fit: 'cover', position: 'centre' }).webp({ quality: WEBP_QUALITY }).toBuffer(),
      );
    }
  } catch (error) {
    if (/pixel limit/i.test((error as Error).message)) throw new AppError(400, 'The image is larger than 40 megapixels', { cause: error });
    throw new AppError(415, 'The image could not be decoded (corrupt or truncated)', { cause: error });
  }
  const largest = HERO_WIDTHS[HERO_WIDTHS.length - 1]!;
  const hash = createHash('sha256').update(outputs.get(largest)!).digest('hex').slice(0, 32);
  const dir = path.resolve(runtime.config.DATA_DIR, 'images', hash);
  const files = HERO_WIDTHS.map((w) => path.join(dir, `${w}.webp`));
  // The same image twice gives the same files: nothing to write.
  if (!(await allExist(files))) {
    await fs.mkdir(dir, { recursive: true });
    // The largest last: heroImage points at it, so once it exists the smaller ones do too.
    for (const width of HERO_WIDTHS) await writeAtomically(path.join(dir, `${width}.webp`), outputs.get(width)!);
  }
  // Several servers on one database: every server copies the files into its own DATA_DIR/images (the largest last, as here).
  if (runtime.store.pages.shared) {
    for (const width of HERO_WIDTHS) await runtime.store.pages.put(heroImagePath(hash, width), outputs.get(width)!, 'images');
  }
  return heroImagePath(hash, largest);
}

/** The bytes of a remote image, fetched under the SSRF policy. */
async function fetchRemoteImage(runtime: Runtime, url: string): Promise<Buffer> {
  try {
    const response = await safeFetch(url, {
      allowPrivateNetworks: runtime.config.FETCH_ALLOW_PRIVATE_NETWORKS,
      maxBytes: MAX_IMAGE_BYTES,
      headers: { Accept: 'image/avif, image/webp, image/png, image/jpeg, image/gif;q=0.9, */*;q=0.1' },
      userAgent: userAgentFor(runtime.config),
    });
    if (response.status !== 200) throw new AppError(502, `The image server answered HTTP ${response.status}`);
    return response.body;
  } catch (error) {
    if (!(error instanceof SafeFetchError)) throw error;
    if (error.code === 'blocked') throw badRequest(`This image URL cannot be fetched: ${error.message}`);
    if (error.code === 'too-large') throw new AppError(413, 'The image is larger than 10 MB', { cause: error });
    throw new AppError(502, error.message, { cause: error });
  }
}

/**
 * POST /api/images/normalize: `imageUrl` is an upload URL of this server (its signature checked,
 * its temp file deleted afterwards) or an http(s) image URL.
 */
export async function normalizeImage(runtime: Runtime, imageUrl: string): Promise<{ path: string }> {
  let url: URL;
  try {
    url = new URL(imageUrl, 'http://upload.invalid');
  } catch {
    throw badRequest('imageUrl is not a URL');
  }
  const upload = UPLOAD_PATH.exec(url.pathname);
  if (upload && url.searchParams.has('sig')) {
    const token = upload[1]!;
    // Only the signature matters here: an expired URL's upload may still be waiting to be normalised.
    if ((await checkUploadUrl(runtime, token, url.searchParams.get('expires'), url.searchParams.get('sig'))) === 'forged') {
      throw new AppError(403, 'This upload URL is not valid');
    }
    const bytes = await readUpload(runtime, token);
    if (!bytes) throw badRequest('Nothing has been uploaded to this URL (or it was already normalised)');
    let result: { path: string };
    try {
      result = { path: await processImage(runtime, bytes) };
    } catch (error) {
      // A full disk (503, try again): the upload waits for that retry. Anything else will not get better.
      if (!isStorageFault(error)) await deleteUpload(runtime, token);
      throw error;
    }
    await deleteUpload(runtime, token);
    return result;
  }
  if (!/^https?:\/\//i.test(imageUrl)) throw badRequest('imageUrl must be an upload URL of this server or an http(s) URL');
  return { path: await processImage(runtime, await fetchRemoteImage(runtime, imageUrl)) };
}
