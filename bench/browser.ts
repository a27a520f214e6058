/** Measurements in Debian's Chromium: bytes a page really downloads, Pagefind's first query, and when a new article becomes findable. */
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

type Transfer = { url: string; bytes: number; type: string };

/** Records every finished request's bytes on the wire (headers and body, as Chromium counts them). */
async function recordTransfers(page: Page): Promise<Transfer[]> {
  const cdp = await page.context().newCDPSession(page);
  const pending = new Map<string, { url: string; type: string }>();
  const done: Transfer[] = [];
  cdp.on('Network.responseReceived', (event) => pending.set(event.requestId, { url: event.response.url, type: event.response.mimeType }));
  cdp.on('Network.loadingFinished', (event) => {
    const seen = pending.get(event.requestId);
    if (seen) done.push({ ...seen, bytes: event.encodedDataLength });
  });
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  return done;
}

export type PageWeight = {
  totalBytes: number;
  requests: number;
  /** Bytes on the wire (compressed as the server sent them) for the HTML, the scripts and the stylesheets. */
  documentBytes: number;
  scriptBytes: number;
  styleBytes: number;
  jsRawBytes: number;
  jsGzipBytes: number;
  jsFiles: number;
};

/**
 * Loads a page in a fresh context, scrolls to the end (islands that hydrate when visible load their
 * code too) and sums what came over the wire (Chromium asks for brotli, which our server sends
 * from the twins written at build time). The JavaScript is also gzipped here, for the gzip budget.
 */
export async function measurePageWeight(browser: Browser, url: string): Promise<PageWeight> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const transfers = await recordTransfers(page);
    const scripts = new Map<string, Buffer>();
    page.on('response', (response) => {
      if (/javascript/.test(response.headers()['content-type'] ?? '')) {
        void response.body().then(
          (body) => scripts.set(response.url(), body),
          () => {},
        );
      }
    });
    // Not "networkidle": the live islands (ticker, counts) keep polling.
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(1000);
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.waitForTimeout(1500);
    const js = [...scripts.values()];
    const bytesOf = (type: RegExp) => transfers.filter((t) => type.test(t.type)).reduce((sum, t) => sum + t.bytes, 0);
    return {
      totalBytes: transfers.reduce((sum, t) => sum + t.bytes, 0),
      requests: transfers.length,
      documentBytes: bytesOf(/html/),
      scriptBytes: bytesOf(/javascript/),
      styleBytes: bytesOf(/css/),
      jsRawBytes: js.reduce((sum, b) => sum + b.length, 0),
      jsGzipBytes: js.reduce((sum, b) => sum + gzipSync(b).length, 0),
      jsFiles: js.length,
    };
  } finally {
    await context.close();
  }
}

/**
 * Records every finished request of a context, the page's and its web workers' alike (Pagefind fetches
 * its index from a worker, which a CDP session on the page does not see), with its bytes on the wire.
 */
function recordContextTransfers(context: BrowserContext): { done: Transfer[]; settled: () => Promise<void> } {
  const done: Transfer[] = [];
  const pending: Promise<void>[] = [];
  context.on('requestfinished', (request) => {
    pending.push(
      request.sizes().then(
        async (sizes) => {
          const response = await request.response();
          done.push({
            url: request.url(),
            bytes: sizes.responseHeadersSize + sizes.responseBodySize,
            type: response?.headers()['content-type'] ?? '',
          });
        },
        () => {},
      ),
    );
  });
  return { done, settled: async () => void (await Promise.all(pending)) };
}

export type SearchOnce = {
  found: boolean;
  results: number;
  /** What /pagefind/ cost until the first results were shown (page and worker requests). */
  pagefindBytes: number;
  pagefindRequests: number;
  /** The same seen by a CDP session on the page alone (the old figure, which missed the worker). */
  pageOnlyBytes: number;
  /** Bundles merged when the first results were shown. */
  bundles: number;
  /** From the navigation to the first result (or the summary of none) on the page. */
  ms: number;
};

/** Runs one search on /search in a fresh context; answers whether `expectHref` was among the results and what /pagefind/ cost. */
export async function searchOnce(
  browser: Browser,
  origin: string,
  query: string,
  expectHref?: string,
  timeoutMs = 5000,
  pageNumber = 1,
): Promise<SearchOnce> {
  const context = await browser.newContext();
  try {
    const all = recordContextTransfers(context);
    const page = await context.newPage();
    const transfers = await recordTransfers(page);
    const started = performance.now();
    await page.goto(`${origin}/search?q=${encodeURIComponent(query)}${pageNumber > 1 ? `&page=${pageNumber}` : ''}`, {
      waitUntil: 'domcontentloaded',
    });
    const selector = expectHref ? `main a[href="${expectHref}"]` : 'main a[href^="/article/"]';
    // The answer, or the count that says the search ran (so a miss costs one search, not the timeout).
    await page.waitForSelector(`${selector}, [data-testid="results-summary"]`, { timeout: timeoutMs }).catch(() => {});
    const ms = performance.now() - started;
    const found = (await page.locator(selector).count()) > 0;
    await page.waitForTimeout(300);
    await all.settled();
    const results = await page.locator('main a[href^="/article/"]').count();
    const isPagefind = (t: Transfer) => new URL(t.url).pathname.startsWith('/pagefind/');
    const pagefind = all.done.filter(isPagefind);
    const bundles = new Set(
      pagefind.map((t) => /^\/pagefind\/([^/]+)\/pagefind-entry\.json/.exec(new URL(t.url).pathname)?.[1]).filter(Boolean),
    ).size;
    return {
      found,
      results,
      pagefindBytes: pagefind.reduce((sum, t) => sum + t.bytes, 0),
      pagefindRequests: pagefind.length,
      pageOnlyBytes: transfers.filter(isPagefind).reduce((sum, t) => sum + t.bytes, 0),
      bundles,
      ms,
    };
  } finally {
    await context.close();
  }
}
