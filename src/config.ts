/** Runtime configuration: one typed module, every field overridable by an environment variable. */
import path from 'node:path';
import { z } from 'zod';

const booleanFromEnv = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const configSchema = z.object({
  /** TCP port of the server. @default 4321 */
  PORT: z.coerce.number().int().min(0).max(65535).default(4321),
  /** Interface to listen on. @default "0.0.0.0" */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Folder with runtime data (JSON collections, uploads, lock file); git-ignored. @default "./data/runtime" */
  DATA_DIR: z.string().min(1).default('data/runtime'),
  /** PostgreSQL database (`postgres://user:pass@host:port/db`): selects the PostgreSQL store; unset keeps the lowdb store in DATA_DIR. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'Expected a postgres:// URL')
    .optional(),
  /** Public base URL, used for canonical links, feeds, sitemaps and the Secure cookie flag. @default "http://localhost:4321" */
  SITE_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:4321'),
  /** Site name shown in titles and metadata. @default "Meridian News" */
  SITE_NAME: z.string().min(1).default('Meridian News'),
  /** Contact address used in static pages. @default "newsroom@example.com" */
  SITE_EMAIL: z.email().default('newsroom@example.com'),
  /** Social handle used in Twitter card metadata. @default "@meridiannews" */
  SITE_TWITTER: z.string().default('@meridiannews'),
  /** The site's language and region, as Open Graph writes it (`og:locale`); its language part is the pages' `lang`. @default "en_US" */
  SITE_LOCALE: z
    .string()
    .regex(/^[a-z]{2,3}_[A-Z]{2}$/, 'Expected a locale such as en_US')
    .default('en_US'),
  /** Username of the first admin, created on first start. @default "admin" */
  ADMIN_USERNAME: z.string().min(1).max(64).default('admin'),
  /** Password of the first admin; random and printed once when absent. */
  ADMIN_PASSWORD: z.string().min(8).optional(),
  /** `demo` fills an empty DATA_DIR with demo content; `none` starts empty. @default "demo" */
  SEED: z.enum(['demo', 'none']).default('demo'),
  /** Lets server-side fetches reach private addresses (tests only). @default false */
  FETCH_ALLOW_PRIVATE_NETWORKS: booleanFromEnv.default(false),
  /** Minutes between scheduled fetches of each enabled RSS source. @default 15 */
  FEED_FETCH_INTERVAL_MINUTES: z.coerce.number().positive().default(15),
  /** Multiplies every per-IP rate limit (comments, votes, newsletter, page views); e.g. 20 for a shared test browser. @default 1 */
  RATE_LIMIT_FACTOR: z.coerce.number().positive().max(10_000).default(1),
  /** Milliseconds a regeneration job waits for its page to go quiet, so a burst of saves renders once. @default 100 */
  REGENERATION_SETTLE_MS: z.coerce.number().int().min(0).max(3_600_000).optional(),
  /**
   * Milliseconds a server holds a regeneration job it claimed (several servers on one database),
   * renewed every quarter of it while the job runs: a server killed mid-job leaves its jobs to the
   * others once this runs out (docs/reliability.md). @default 4000
   */
  JOB_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).default(4000),
  /**
   * Render threads of `npm run rebuild -- --all` and of the server's reconcile (a start after a deploy
   * draws every page again on them; a page job uses one), each drawing pages with the bundle (issue 36).
   * @default os.availableParallelism()
   */
  RENDER_THREADS: z.coerce.number().int().min(1).max(256).optional(),
  /**
   * Whether `astro build` prerenders the data pages (articles, listings, archives, live feeds). `false`
   * builds the bundle and the fixed pages only; `npm run rebuild -- --all` then renders every data page
   * through the render twins, on all cores. @default true
   */
  PRERENDER_DATA_PAGES: booleanFromEnv.default(true),
  /**
   * How many reverse proxies in front of the server append to X-Forwarded-For: the client address is
   * the entry the outermost trusted one appended, never one the client wrote itself. `true` means 1,
   * `false` or 0 none (the socket address counts). @default 0
   */
  TRUST_PROXY: z.union([booleanFromEnv.transform((trusted) => (trusted ? 1 : 0)), z.coerce.number().int().min(0).max(32)]).default(0),
  /**
   * Memory the server keeps hot static files (and their brotli and gzip twins) in, in MiB. Not 0: a
   * file read from disk is checked against its twins, which is cheap once but not on every request. @default 64
   */
  STATIC_CACHE_MB: z.coerce.number().min(1).max(65_536).default(64),
  /** Optional URL that receives the list of regenerated paths (CDN purge hook). */
  PURGE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Secret for signing upload URLs and internal render requests; derived and stored in DATA_DIR when absent. */
  APP_SECRET: z.string().min(32).optional(),
  /** SMTP server for outgoing mail, `smtp://user:pass@host:port` (`smtps://` for TLS); unset writes .eml files to DATA_DIR/outbox/. */
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'Expected smtp://user:pass@host:port or smtps://...' }).optional(),
  /**
   * Milliseconds the mail server may take to accept a connection and greet (twice that to answer a step
   * of a delivery); a sign-up waits this long at most. @default 30000
   */
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Sender of every mail, `Name <address>` or an address. @default "SITE_NAME <SITE_EMAIL>" */
  MAIL_FROM: z.string().min(3).max(320).optional(),
  /** Local time (HH:MM) the weekday briefing goes out; `off` leaves sending to `npm run briefing` (cron). @default "07:00" */
  BRIEFING_TIME: z
    .union([z.literal('off'), z.string().regex(/^(?:[01]\d|2[0-3]):[0-5]\d$/, 'Expected HH:MM (24-hour) or off')])
    .default('07:00'),
  /** IANA time zone of BRIEFING_TIME and of the briefing's day. @default "UTC" */
  BRIEFING_TZ: z
    .string()
    .default('UTC')
    .refine((zone) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: zone });
        return true;
      } catch {
        return false;
      }
    }, 'Expected an IANA time zone such as Europe/Berlin'),
  /** The least severe log level written: fatal, error, warn, info, debug, trace or silent. @default "info" */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one JSON object a line) or `pretty` (readable lines); unset: pretty on a terminal, JSON otherwise. */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Port of a separate HTTP server answering `/metrics` for Prometheus; unset serves none. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Interface the metrics server listens on. @default "127.0.0.1" */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Bearer token that opens `/metrics` on the main server (`Authorization: Bearer ...`); unset: `/metrics` answers 404 there. */
  METRICS_TOKEN: z.string().min(16, 'Use at least 16 characters').optional(),
  /**
   * Stripe's secret API key (`sk_live_...`, or `sk_test_...` for Stripe's test mode); unset, paid
   * subscriptions are off and paid-only stories can only be read by comped members. @see docs/members.md
   */
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/, 'Expected a Stripe secret key (sk_live_... or sk_test_...)')
    .optional(),
  /** The signing secret of the webhook endpoint `/api/members/stripe-webhook` in Stripe's dashboard (`whsec_...`). */
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_[A-Za-z0-9_]+$/, 'Expected a webhook signing secret (whsec_...)')
    .optional(),
  /** Where Stripe's API answers; only for a local stand-in of Stripe in tests. @default "https://api.stripe.com" */
  STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Folder for scheduled backups (one archive a day); unset, the server takes none (`npm run backup` still works). */
  BACKUP_DIR: z.string().min(1).optional(),
  /** Local time (HH:MM, in BRIEFING_TZ) the daily backup is taken at, or after when the server was down then. @default "03:30" */
  BACKUP_TIME: z
    .string()
    .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$/, 'Expected HH:MM (24-hour)')
    .default('03:30'),
  /** How many scheduled archives BACKUP_DIR keeps; the oldest go once a new one is complete. @default 7 */
  BACKUP_KEEP: z.coerce.number().int().min(1).max(10_000).default(7),
  /** Run by /bin/sh on each new scheduled archive, its path as "$1" (e.g. `rclone copy "$1" remote:meridian/`); a failure is logged. */
  BACKUP_COMMAND: z.string().min(1).optional(),
});

export type Config = z.infer<typeof configSchema>;

/** Every variable the schema reads (.env.example lists them all; a unit test keeps it so). */
export const CONFIG_KEYS = Object.keys(configSchema.shape) as readonly (keyof Config)[];

/** Parses the configuration from an environment; throws a readable error on a bad value. */
export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

let cached: Config | undefined;

/** The configuration of this process, parsed once from process.env. */
export function getConfig(): Config {
  cached ??= parseConfig();
  return cached;
}

/** OUT_DIR names a folder the build cannot live in (see buildOutDir). */
export class OutDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutDirError';
  }
}

/**
 * The build output folder (OUT_DIR, default dist), resolved against the project root. It must lie
 * inside the project: the server bundle in OUT_DIR/server imports its packages by name, and Node
 * looks for them in the node_modules folders from the bundle's own folder upwards, so a build
 * elsewhere fails when it is prerendered or served ("Cannot find package ..."). The project folder
 * itself is refused too (a build empties OUT_DIR first). Any folder can still be served: SERVE_DIR.
 */
export function buildOutDir(root: string, value: string = process.env.OUT_DIR ?? 'dist'): string {
  const outDir = path.resolve(root, value);
  const inside = path.relative(root, outDir);
  if (!inside || inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside))
    throw new OutDirError(
      `OUT_DIR=${value} must be a folder inside the project (${root}), not ${inside ? 'outside it' : 'the project itself'}: ` +
        'the server bundle finds its packages in node_modules from its own folder upwards. ' +
        'Build under the project (e.g. OUT_DIR=.out/site) and point SERVE_DIR at any folder to serve a copy of OUT_DIR/client.',
    );
  return outDir;
}
