/** Unit-test fixtures: a real store in a temp dir (lowdb, or PostgreSQL with TEST_STORE=pg), a runtime around it, article records. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { createCoordination, type ArticleChange, type Runtime } from '../../src/server/runtime.ts';
import { isAppError, type AppError } from '../../src/server/errors.ts';
import { databaseFor, testingPostgres } from '../helpers/postgres.ts';
import { createLog, createSilentLog, type Logger } from '../../src/server/log.ts';
import { createMetrics } from '../../src/server/metrics.ts';
import { HealthRegistry } from '../../src/server/health.ts';

export function makeTempDir(prefix = 'meridian-unit-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A runtime over a fresh store; `changes` records what the article hooks were told. `lowdb` pins the
 * lowdb store for tests of its files; otherwise TEST_STORE=pg gives it a PostgreSQL database.
 */
export async function makeRuntime(
  dataDir = makeTempDir(),
  store: 'configured' | 'lowdb' = 'configured',
): Promise<Runtime & { changes: ArticleChange[][]; dataDir: string }> {
  const databaseUrl = store === 'configured' && testingPostgres() ? await databaseFor(dataDir) : undefined;
  const opened = await openStore(dataDir, 'write', { databaseUrl });
  const changes: ArticleChange[][] = [];
  return {
    config: parseConfig({ DATA_DIR: dataDir, SEED: 'none', DATABASE_URL: databaseUrl }),
    store: opened,
    hooks: { articlesChanged: [(c) => void changes.push(c)], writesInFlight: 0 },
    services: new Map(),
    ...quietObservability(),
    changes,
    dataDir,
  };
}

/** The rest of a hand-made runtime: a logger that writes nothing, a registry without the process defaults, empty coordination. */
export function quietObservability(): Pick<
  Runtime,
  'log' | 'requests' | 'metrics' | 'startedAt' | 'draining' | 'health' | 'briefingTurn' | 'feedFetches' | 'fetchProgress'
> {
  return {
    ...createCoordination(),
    ...createSilentLog(),
    metrics: createMetrics({ defaults: false }),
    startedAt: Date.now(),
    draining: false,
    health: new HealthRegistry(),
  };
}

/** A logger whose lines' messages land in `lines` (tests that read what a component logged). */
export function collectingLog(lines: string[]): Logger {
  const stream = { write: (line: string) => void lines.push((JSON.parse(line) as { msg: string }).msg) };
  return createLog({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json' }, { stream }).log;
}

let counter = 0;

/** A complete stored article; override what the test is about. */
export function articleRecord(overrides: Partial<ArticleRecord> = {}): ArticleRecord {
  counter++;
  const at = new Date(Date.UTC(2025, 0, 1, 0, counter)).toISOString();
  return {
    id: `article-${counter}`,
    title: `Article ${counter}`,
    slug: `article-${counter}`,
    bodyHtml: '<p>Body</p>',
    section: 'world',
    tags: [],
    authorName: 'Desk',
    createdAt: at,
    updatedAt: at,
    publishedAt: at,
    readingTime: 1,
    isEditorsPick: false,
    isBreaking: false,
    status: 'published',
    ...overrides,
  };
}

export async function closeQuietly(store: Store | undefined): Promise<void> {
  await store?.close().catch(() => {});
}

/** Awaits a call and answers the AppError it threw (undefined when it succeeded); other errors propagate. */
export async function appErrorOf(promise: Promise<unknown>): Promise<AppError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return error;
  }
}
