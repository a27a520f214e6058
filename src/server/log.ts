/**
 * The server's one logger (pino): JSON lines by default, readable lines on a terminal, and the
 * request scope that tags every line written while a request is handled with that request's id.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { Config } from '../config.ts';

export type { Logger } from 'pino';

/** What a request carries through its asynchronous work: its id, and the route Astro matched (a bounded metrics label). */
export type RequestContext = { reqId: string; route?: string };
export type RequestScope = AsyncLocalStorage<RequestContext>;

export type LogSettings = Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>;

export type LogOptions = {
  /** Where lines go instead of stdout (tests collect them). */
  stream?: DestinationStream;
  /** Whether stdout is a terminal (readable lines unless LOG_FORMAT says otherwise). @default process.stdout.isTTY */
  isTty?: boolean;
};

/**
 * Keys whose values never reach a line, wherever they appear one level down: a safety net, since
 * no code should pass a secret in the first place.
 */
const SECRET_KEYS = [
  'password',
  'passwordHash',
  'token',
  'secret',
  'authorization',
  'cookie',
  'set-cookie',
  'email',
  'APP_SECRET',
  'DATABASE_URL',
  'SMTP_URL',
  'METRICS_TOKEN',
  'ADMIN_PASSWORD',
];
const REDACT_PATHS = [...SECRET_KEYS.map((key) => `["${key}"]`), ...SECRET_KEYS.map((key) => `*["${key}"]`)];

/**
 * stdout for every line, except `fatal` (a refusal to start, the last words of a crash), which goes to
 * stderr alone: where a person or a supervisor looks for why a process did not run.
 */
function standardStreams(pretty: boolean, colorize: boolean): DestinationStream {
  const to = (fd: 1 | 2): DestinationStream =>
    pretty
      ? // In this thread (no transport worker), synchronously: a terminal reads fast, and nothing is lost at exit.
        PinoPretty({ destination: fd, colorize, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : // Written at once: lines keep their order and none is lost when the process exits (an
        // asynchronous stdout raced the final flush); a write to a pipe or journald costs microseconds.
        pino.destination({ dest: fd, sync: true });
  return pino.multistream(
    [
      { level: 'trace', stream: to(1) },
      { level: 'fatal', stream: to(2) },
    ],
    { dedupe: true },
  );
}

/** Creates the logger and the request scope its lines read their request id from. */
export function createLog(settings: LogSettings, options: LogOptions = {}): { log: Logger; requests: RequestScope } {
  const requests: RequestScope = new AsyncLocalStorage<RequestContext>();
  const pretty =
    settings.LOG_FORMAT === 'pretty' || (settings.LOG_FORMAT === undefined && (options.isTty ?? process.stdout.isTTY === true));
  const stream = options.stream ?? standardStreams(pretty, options.isTty ?? process.stdout.isTTY === true);
  const log = pino(
    {
      level: settings.LOG_LEVEL,
      timestamp: stdTimeFunctions.isoTime,
      // "level":"warn" rather than 40: read by people and by `jq 'select(.level=="error")'` alike.
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Lines written while a request is handled (an auth event, a 5xx) name it without being told.
      mixin: () => {
        const context = requests.getStore();
        return context ? { reqId: context.reqId } : {};
      },
    },
    stream,
  );
  Object.defineProperty(log, ONCE_PROPERTY, { value: new Map() satisfies OnceMemory });
  return { log, requests };
}

/** A logger that writes nothing (unit tests that do not read the log). */
export function createSilentLog(): { log: Logger; requests: RequestScope } {
  return createLog({ LOG_LEVEL: 'silent', LOG_FORMAT: 'json' }, { stream: { write: () => {} } });
}

/** An e-mail address as a log may show it: the first character of the local part, then the domain (`j***@example.com`). */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

/** An error's message for a log line's `err` field without its stack (expected failures: a feed that is down). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** When each once-a-minute cause was last written, and how many lines it left out since. */
type OnceMemory = Map<string, { at: number; suppressed: number }>;
/**
 * The memory lives on the root logger createLog makes (a child logger reads it through its prototype),
 * so the server script and the Astro bundle, which each load a copy of this module but share the
 * runtime's logger, say a cause once between them.
 */
const ONCE_PROPERTY = 'meridianOnceSeen';
const fallbackOnce: OnceMemory = new Map();
function onceMemoryOf(log: Logger): OnceMemory {
  return (log as unknown as Record<string, OnceMemory | undefined>)[ONCE_PROPERTY] ?? fallbackOnce;
}
const ONCE_INTERVAL_MS = 60_000;

/**
 * Writes a line for a cause (a dependency that is down) at most once a minute, however many requests
 * or retries meet it; the next line counts the ones left out (`suppressed`). Answers whether it wrote.
 */
export function logOncePerMinute(
  log: Logger,
  key: string,
  fields: Record<string, unknown>,
  message: string,
  level: 'warn' | 'error' = 'warn',
): boolean {
  // A monotonic clock: a wall clock moved back must not silence a cause for the length of the jump.
  const now = performance.now();
  const onceSeen = onceMemoryOf(log);
  const last = onceSeen.get(key);
  if (last && now - last.at < ONCE_INTERVAL_MS) {
    last.suppressed++;
    return false;
  }
  // Causes whose minute is over are forgotten, so keys that carry details cannot grow without bound.
  if (onceSeen.size >= 1000) for (const [old, entry] of onceSeen) if (now - entry.at >= ONCE_INTERVAL_MS) onceSeen.delete(old);
  onceSeen.set(key, { at: now, suppressed: 0 });
  log[level](
    { ...fields, ...(last?.suppressed ? { suppressed: last.suppressed } : {}) },
    last?.suppressed ? `${message} (${last.suppressed} more since the last line)` : message,
  );
  return true;
}
