/**
 * Sends a served file from one open descriptor. `send` stats a path and then opens it again by
 * path; when the worker renames a new page over it in between, the answer mixes the old length with
 * the new bytes (a truncated page, or a connection cut short). An open descriptor keeps the file a
 * reader started with, however many times it is replaced meanwhile.
 */
import fs from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
};

export function contentTypeOf(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/** Weak validator from size and mtime, in the same format as `send` (the etag package). */
export function weakEtag(stat: { size: number; mtime: Date }): string {
  return `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`;
}

/** Whether the client's copy is current (If-None-Match first, else If-Modified-Since), as `fresh` decides. */
export function isNotModified(headers: http.IncomingHttpHeaders, etag: string, mtime: Date): boolean {
  const noneMatch = headers['if-none-match'];
  const modifiedSince = headers['if-modified-since'];
  if (!noneMatch && !modifiedSince) return false;
  // An end-to-end reload asks for the full answer.
  if (/(?:^|,)\s*no-cache\s*(?:,|$)/.test(headers['cache-control'] ?? '')) return false;
  if (noneMatch) {
    if (noneMatch.trim() === '*') return true;
    const bare = (tag: string) => tag.trim().replace(/^W\//, '');
    return noneMatch.split(',').some((tag) => bare(tag) === bare(etag));
  }
  const since = Date.parse(modifiedSince!);
  return Number.isFinite(since) && Math.floor(mtime.getTime() / 1000) * 1000 <= since;
}

/**
 * Answers GET/HEAD with the file (200, or 304 for a current validator) and the given headers.
 * Answers false, having sent nothing, when the file is not there (any more): the caller falls through.
 */
export async function sendFileSnapshot(req: http.IncomingMessage, res: http.ServerResponse, file: string, headers: Record<string, string>): Promise<boolean> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return false;
    throw error;
  }
  let streaming = false;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return false;
    const etag = weakEtag(stat);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', stat.mtime.toUTCString());
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (isNotModified(req.headers, etag, stat.mtime)) {
      res.writeHead(304);
      res.end();
      return true;
    }
    res.setHeader('Content-Type', contentTypeOf(file));
    res.setHeader('Content-Length', stat.size);
    res.writeHead(200);
    if (req.method === 'HEAD' || stat.size === 0) {
      res.end();
      return true;
    }
    streaming = true;
    // The stream reads exactly the bytes stat counted, from the file this descriptor holds.
    await pipeline(handle.createReadStream({ start: 0, end: stat.size - 1, autoClose: true }), res).catch(() => {
      // The reader went away mid-file: nothing to answer any more.
    });
    return true;
  } finally {
    if (!streaming) await handle.close();
  }
}
