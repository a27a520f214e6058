/**
 * What the page-view benches share (bench/analytics.ts, bench/lab/beacon-profile.ts): a data folder with
 * published stories, the built server on it with rate limits out of the way, and a reader's browser.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NAV_SECTIONS } from '../src/schemas/common.ts';
import { openStore } from '../src/store/index.ts';
import { startServer, type TestServer } from '../tests/helpers/server.ts';
import { benchStory } from './stories.ts';

/** A reader's browser: anything that does not look like one is not counted (a bot). */
export const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

/** Writes `count` published stories (`bench-story-N`) into a new lowdb data folder; answers the folder and their ids. */
export async function seedStories(count: number): Promise<{ dataDir: string; ids: string[] }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-beacons-'));
  const store = await openStore(dataDir, 'write', { databaseUrl: undefined });
  const now = new Date().toISOString();
  const ids: string[] = [];
  try {
    for (let i = 0; i < count; i++) {
      ids.push(`bench-${i}`);
      await store.articles.insert(benchStory(i, now, { section: NAV_SECTIONS[i % NAV_SECTIONS.length]! }));
    }
  } finally {
    await store.close();
  }
  return { dataDir, ids };
}

/** The built server on `dataDir`, its rate limits raised so one client address may send thousands of beacons. */
export function startBeaconServer(dataDir: string, env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({ dataDir, env: { RATE_LIMIT_FACTOR: '10000', TRUST_PROXY: 'true', ...env } });
}

/** A beacon as `navigator.sendBeacon` sends it (text/plain JSON), from a reader's browser on the site's own origin. */
export function beaconRequest(serverUrl: string, body: object) {
  return {
    url: `${serverUrl}/api/analytics/pageview`,
    method: 'POST' as const,
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'text/plain;charset=UTF-8', 'User-Agent': BROWSER, Origin: serverUrl },
  };
}
