/** Outgoing mail through nodemailer: SMTP when SMTP_URL is set, else .eml files in DATA_DIR/outbox/ for development. */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Config } from '../../config.ts';

export type MailMessage = {
  to: string;
  subject: string;
  html: string;
  text: string;
  headers?: Record<string, string>;
  /** A fixed Message-ID (without brackets' content rules: nodemailer adds them). */
  messageId?: string;
};

export type SendOptions = {
  /** Gives up on the message (a caller that cannot wait longer); what happened to it is then unknown unless it was still queued. */
  signal?: AbortSignal;
};

export type Mailer = {
  /** Sends one message; throws a MailError (temporary or not) when it was not accepted. */
  send(message: MailMessage, options?: SendOptions): Promise<{ messageId: string }>;
  /** Where mail goes, for logs: `smtp://host:port` (no credentials) or the outbox folder. */
  readonly destination: string;
  close(): void;
};

export class MailError extends Error {
  /** Worth another try later: the server refused for now (4xx), or could not be reached. */
  readonly temporary: boolean;
  /**
   * The message certainly did not go out: the server answered with a refusal, or the failure came
   * before the transaction (no connection, no greeting, DNS, authentication). Otherwise (a
   * connection lost mid-transaction) the server may have accepted it.
   */
  readonly notSent: boolean;
  constructor(message: string, options: { temporary: boolean; notSent: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'MailError';
    this.temporary = options.temporary;
    this.notSent = options.notSent;
  }
}

/** nodemailer's timeouts that happen before a message is handed over. */
const SETUP_TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT']);
/** nodemailer's error codes raised before a message is handed over. */
const SETUP_CODES = new Set(['EDNS', 'EAUTH', 'ETLS', 'ENOAUTH']);

export function classifyMailError(error: unknown): MailError {
  if (error instanceof MailError) return error;
  const { code, responseCode, message, timeoutType } = error as {
    code?: string;
    responseCode?: number;
    message?: string;
    timeoutType?: string;
  };
  const text = message ?? String(error);
  // Given up by the caller (a sign-up's deadline): nodemailer cannot tell whether the server took it by then.
  if (code === 'EABORT') return new MailError(text, { temporary: true, notSent: false, cause: error });
  if (typeof responseCode === 'number' && responseCode >= 400) {
    return new MailError(text, { temporary: responseCode < 500, notSent: true, cause: error });
  }
  const beforeTransaction =
    (timeoutType !== undefined && SETUP_TIMEOUTS.has(timeoutType)) ||
    (code !== undefined && SETUP_CODES.has(code)) ||
    /ECONNREFUSED|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN/.test(text);
  return new MailError(text, { temporary: beforeTransaction && code !== 'EAUTH', notSent: beforeTransaction, cause: error });
}

/** The From header: MAIL_FROM, else the site's name and contact address. */
export function mailFrom(config: Config): string {
  return config.MAIL_FROM ?? `"${config.SITE_NAME.replace(/["\\]/g, '')}" <${config.SITE_EMAIL}>`;
}

/** Writes a file atomically (temp file + rename): a reader never sees half a message. */
function writeFileAtomic(file: string, data: Buffer): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, data);
    fs.renameSync(temp, file);
  } catch (error) {
    // A full disk: no partial temp file keeps the space.
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/** Orders outbox files written within the same millisecond. */
let outboxSequence = 0;

/** Opens the mailer the configuration asks for. */
export function createMailer(config: Config): Mailer {
  const from = mailFrom(config);
  const siteHost = new URL(config.SITE_URL).hostname;
  if (config.SMTP_URL) {
    const timeoutMs = config.SMTP_TIMEOUT_MS;
    const transport = nodemailer.createTransport({
      url: config.SMTP_URL,
      // A pool keeps a few connections open across a batch instead of one TLS handshake per recipient.
      pool: true,
      maxConnections: 3,
      // nodemailer waits 2 minutes for a connection and 10 minutes for a silent socket: a mail server
      // that hangs would hold a sign-up or a briefing that long. The socket's limit is the longer one,
      // so a server that never greets fails as such (certainly not sent, retried), not as a silence
      // that could have fallen mid-transaction (in doubt, never retried).
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: 2 * timeoutMs,
    });
    const url = new URL(config.SMTP_URL);
    return {
      destination: `${url.protocol}//${url.host}`,
      async send(message, options = {}) {
        try {
          const info = await transport.sendMail({
            from,
            ...message,
            messageId: message.messageId ?? `<${randomBytes(12).toString('hex')}@${siteHost}>`,
            ...(options.signal ? { signal: options.signal } : {}),
          });
          return { messageId: info.messageId };
        } catch (error) {
          throw classifyMailError(error);
        }
      },
      close: () => transport.close(),
    };
  }
  const outbox = path.join(path.resolve(config.DATA_DIR), 'outbox');
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    destination: outbox,
    async send(message) {
      const messageId = message.messageId ?? `<${randomBytes(12).toString('hex')}@${siteHost}>`;
      const info = (await transport.sendMail({ from, ...message, messageId })) as { message: Buffer };
      fs.mkdirSync(outbox, { recursive: true });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const who = message.to.replace(/[^A-Za-z0-9@._-]/g, '_').slice(0, 80);
      const sequence = String(++outboxSequence % 1_000_000).padStart(6, '0');
      writeFileAtomic(path.join(outbox, `${stamp}-${sequence}-${who}-${randomBytes(3).toString('hex')}.eml`), info.message);
      return { messageId };
    },
    close: () => transport.close(),
  };
}

export type RetryOptions = {
  /** Tries in all. @default 3 */
  attempts?: number;
  /** The wait before the second try; each further one waits 4 times longer. @default 1000 */
  baseDelayMs?: number;
  /** No try starts, and no wait runs, past this instant (performance.now()): a person is waiting. */
  deadline?: number;
  /** Passed to each try (see SendOptions). */
  signal?: AbortSignal;
};

/**
 * Sends with retries (1 s, then 4 s later) when a failure is temporary and the message certainly
 * did not go out; a connection lost mid-transaction is never retried (it may have been accepted).
 */
export async function sendWithRetry(mailer: Mailer, message: MailMessage, options: RetryOptions = {}): Promise<{ messageId: string }> {
  const { attempts = 3, baseDelayMs = 1000, deadline = Infinity, signal } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await mailer.send(message, signal ? { signal } : {});
    } catch (error) {
      const failure = classifyMailError(error);
      const delayMs = baseDelayMs * 4 ** (attempt - 1);
      if (!failure.temporary || !failure.notSent || attempt >= attempts || performance.now() + delayMs >= deadline) throw failure;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/**
 * Sends a message a person is waiting for (a sign-up's confirmation, a test copy): retried as
 * sendWithRetry does, but given up after `budgetMs` in all (SMTP_TIMEOUT_MS), waiting in the pool included.
 */
export function sendWithinBudget(mailer: Mailer, message: MailMessage, budgetMs: number): Promise<{ messageId: string }> {
  return sendWithRetry(mailer, message, { deadline: performance.now() + budgetMs, signal: AbortSignal.timeout(budgetMs) });
}
