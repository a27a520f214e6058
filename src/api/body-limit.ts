/** The one request-body size limit of the HTTP edge: JSON bodies, beacons and image uploads all pass through it. */
import type { IncomingMessage } from 'node:http';
import { AppError } from '../server/errors.ts';

/**
 * How much of an over-limit body is still read (and thrown away) before the 413 is sent: answering
 * while the client is still sending makes many clients fail with EPIPE/ECONNRESET instead of seeing
 * the 413. Beyond this the connection is cut.
 */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * A 413 with `Connection: close`, so the client does not reuse a connection that may still carry the
 * unread rest of its upload (it would fail the next request).
 */
export function bodyTooLarge(message: string): AppError {
  return new AppError(413, message, { headers: { Connection: 'close' } });
}

/** The declared Content-Length, or undefined when the header is absent or not a number. */
export function declaredLength(request: Request): number | undefined {
  const header = request.headers.get('content-length');
  const value = header === null ? NaN : Number(header);
  return Number.isFinite(value) ? value : undefined;
}

/** Reads and discards the rest of a stream, up to DRAIN_LIMIT_BYTES, then lets go of it. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, alreadyRead: number): Promise<void> {
  let total = alreadyRead;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      total += value.byteLength;
      if (total > DRAIN_LIMIT_BYTES) break;
    }
  } catch {
    return;
  }
  await reader.cancel().catch(() => {});
}

/**
 * A request body's chunks, `maxBytes` in all at most. A body declared larger is refused before any of
 * it is used; one that turns out larger while streaming is drained and refused, both with what `tooLarge`
 * makes (a 413). A body cut off mid-way (client gone, request timeout) is a 400 that closes the connection.
 */
export async function* limitBody(
  request: Request,
  maxBytes: number,
  tooLarge: () => AppError = () => bodyTooLarge(`Request body is larger than ${maxBytes} bytes`),
): AsyncGenerator<Uint8Array> {
  const declared = declaredLength(request) ?? 0;
  if (!request.body) {
    if (declared > maxBytes) throw tooLarge();
    return;
  }
  const reader = request.body.getReader();
  let finished = false;
  try {
    if (declared > maxBytes) {
      // A body we would not even drain is refused before any of it is read (the finally lets go of it).
      if (declared <= DRAIN_LIMIT_BYTES) {
        await drain(reader, 0);
        finished = true;
      }
      throw tooLarge();
    }
    let total = 0;
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        finished = true;
        throw new AppError(400, 'The request body was cut off', { headers: { Connection: 'close' }, cause: error });
      }
      if (chunk.done) {
        finished = true;
        return;
      }
      total += chunk.value.byteLength;
      if (total > maxBytes) {
        await drain(reader, total);
        finished = true;
        throw tooLarge();
      }
      yield chunk.value;
    }
  } finally {
    // The consumer stopped early (its own failure): let go of the body.
    if (!finished) await reader.cancel().catch(() => {});
  }
}

/** Reads a whole request body up to a byte limit; a larger body is a 413. */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of limitBody(request, maxBytes)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * `readBodyBytes` for a Node request, for the routes our server answers before Astro (the page-view
 * beacon): the same limit, the same drain before a 413, the same 400 for a body cut off.
 */
export async function readNodeBodyBytes(request: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const header = request.headers['content-length'];
  const declared = header === undefined ? 0 : Number(header);
  // Made only when thrown: an Error's stack costs more than reading a beacon.
  const tooLarge = () => bodyTooLarge(`Request body is larger than ${maxBytes} bytes`);
  if (declared > DRAIN_LIMIT_BYTES) {
    request.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > DRAIN_LIMIT_BYTES) break;
      if (total <= maxBytes) chunks.push(chunk);
    }
  } catch (error) {
    throw new AppError(400, 'The request body was cut off', { headers: { Connection: 'close' }, cause: error });
  }
  if (declared > maxBytes || total > maxBytes) {
    if (!request.complete) request.destroy();
    throw tooLarge();
  }
  return Buffer.concat(chunks);
}
