/** The optional CDN purge hook: PURGE_URL receives a POST with the paths the worker rewrote or removed. */

export type PurgeBody = { paths: string[]; urls: string[] };

/**
 * Sends one purge notification, best effort: it never throws and never holds the worker up
 * (the caller does not await it; a slow endpoint is cut off after 5 s).
 */
export function sendPurge(purgeUrl: string, siteUrl: string, paths: readonly string[], log: (line: string) => void): Promise<void> {
  const body: PurgeBody = { paths: [...paths], urls: paths.map((p) => new URL(p, siteUrl).href) };
  return fetch(purgeUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  })
    .then(async (response) => {
      await response.body?.cancel();
      if (!response.ok) log(`[publish] purge hook answered HTTP ${response.status} for ${paths.length} path(s)`);
    })
    .catch((error: unknown) => {
      log(`[publish] purge hook failed for ${paths.length} path(s): ${(error as Error).message}`);
    });
}
