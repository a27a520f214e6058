/** Feed bytes to feed items with feedparser: gzip sniffing, charset decoding, clear errors for non-feeds. */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import FeedParser from 'feedparser';
import { timeSlicer } from '../time-slice.ts';

const gunzip = promisify(zlib.gunzip);

/** Characters handed to the XML parser at a time (a few milliseconds of parsing). */
const PARSE_CHUNK_CHARS = 4096;

/** Items taken from one fetch; a feed larger than this is read from the top (newest first in practice). */
export const MAX_ITEMS_PER_FETCH = 200;

export type ParsedFeed = {
  type: string;
  version: string;
  title: string;
  items: FeedParser.Item[];
  /** XML errors the lenient parser recovered from (kept for diagnostics, not fatal). */
  recoveredErrors: number;
};

/** A feed that cannot be read; its message is what the editor sees on the source. */
export class FeedParseError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'FeedParseError';
  }
}

/** The charset parameter of a Content-Type header, if any. */
function charsetFromContentType(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1];
}

/** The encoding named in the XML declaration (read as ASCII, which every candidate encoding extends). */
function charsetFromXmlDeclaration(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 512)).toString('latin1');
  const match = /^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return match?.[1];
}

function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/**
 * Decodes feed bytes to text: a byte-order mark wins, then the HTTP charset, then the XML
 * declaration, then UTF-8. feedparser (sax) only reads UTF-8, so legacy charsets such as
 * windows-1251 or iso-8859-1 must be decoded here.
 */
export function decodeFeedText(bytes: Uint8Array, contentType?: string): string {
  const candidates = [bomCharset(bytes), charsetFromContentType(contentType), charsetFromXmlDeclaration(bytes), 'utf-8'];
  for (const label of candidates) {
    if (!label) continue;
    try {
      return new TextDecoder(label.toLowerCase()).decode(bytes);
    } catch {
      // An unknown label: try the next source of truth.
    }
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/** Gzip bytes served without Content-Encoding (a .xml.gz feed) are unpacked, within the same cap. */
async function gunzipIfNeeded(bytes: Buffer, maxBytes: number): Promise<Buffer> {
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  try {
    return await gunzip(bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    throw new FeedParseError('The feed is compressed and could not be unpacked (corrupt or too large)', { cause: error });
  }
}

function looksLikeHtml(text: string, contentType: string | undefined): boolean {
  return /^text\/html\b/i.test(contentType ?? '') || /^\s*(<!--[\s\S]*?-->\s*)*<(!doctype\s+html|html)\b/i.test(text);
}

/**
 * Parses RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom. `feedUrl` is the base for relative links when the
 * feed has no xml:base. Never throws anything but FeedParseError.
 */
export async function parseFeed(
  input: Buffer,
  options: { contentType?: string | undefined; feedUrl: string; maxBytes?: number },
): Promise<ParsedFeed> {
  const bytes = await gunzipIfNeeded(input, options.maxBytes ?? 5 * 1024 * 1024);
  const text = decodeFeedText(bytes, options.contentType).replace(/^\uFEFF/, '');
  if (text.trim() === '') throw new FeedParseError('The feed is empty');
  const parser = new FeedParser({ feedurl: options.feedUrl, addmeta: false });
  const items: FeedParser.Item[] = [];
  let meta: FeedParser.Meta | undefined;
  try {
    let failed = false;
    await new Promise<void>((resolve, reject) => {
      parser.on('error', (error: unknown) => {
        failed = true;
        reject(error as Error);
      });
      parser.on('meta', (m: FeedParser.Meta) => {
        meta = m;
      });
      parser.on('readable', () => {
        let item: FeedParser.Item | null;
        while ((item = parser.read() as FeedParser.Item | null)) if (items.length < MAX_ITEMS_PER_FETCH) items.push(item);
      });
      parser.on('end', () => resolve());
      // A feed may be megabytes: parsed a slice at a time, with a turn of the event loop between slices.
      (async () => {
        const slice = timeSlicer();
        for (let at = 0; at < text.length && !failed;) {
          let end = Math.min(text.length, at + PARSE_CHUNK_CHARS);
          // Never split a surrogate pair between two writes.
          if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
          parser.write(text.slice(at, end), 'utf8');
          at = end;
          await slice();
        }
        if (!failed) parser.end();
      })().catch(reject);
    });
  } catch (error) {
    if (looksLikeHtml(text, options.contentType)) {
      throw new FeedParseError('The URL answered with an HTML page, not an RSS or Atom feed', { cause: error });
    }
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    if (message === 'Not a feed') throw new FeedParseError('The URL did not answer with an RSS or Atom feed', { cause: error });
    throw new FeedParseError(`The feed could not be read: ${message}`, { cause: error });
  }
  const recoveredErrors = (parser as unknown as { errors?: unknown[] }).errors?.length ?? 0;
  return {
    type: meta?.['#type'] ?? 'unknown',
    version: meta?.['#version'] ?? '',
    title: meta?.title ?? '',
    items,
    recoveredErrors,
  };
}
