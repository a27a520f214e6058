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

export type Mailer = {
  /** Sends one message; throws a MailError (temporary or not) when it was not accepted. */
  send(message: MailMessage): Promise<{ messageId: string }>;
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
    // A pool keeps a few connections open across a batch instead of one TLS handshake per recipient.
    const transport = nodemailer.createTransport(
      config.SMTP_URL + (config.SMTP_URL.includes('?') ? '&' : '?') + 'pool=true&maxConnections=3',
    );
    const url = new URL(config.SMTP_URL);
    return {
      destination: `${url.protocol}//${url.host}`,
      async send(message) {
        try {
          const info = await transport.sendMail({
            from,
            ...message,
            messageId: message.messageId ?? `<${randomBytes(12).toString('hex')}@${siteHost}>`,
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

/**
 * Sends with retries (1 s, then 4 s later) when a failure is temporary and the message certainly
 * did not go out; a connection lost mid-transaction is never retried (it may have been accepted).
 */
export async function sendWithRetry(
  mailer: Mailer,
  message: MailMessage,
  attempts = 3,
  baseDelayMs = 1000,
): Promise<{ messageId: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await mailer.send(message);
    } catch (error) {
      const failure = classifyMailError(error);
      if (!failure.temporary || !failure.notSent || attempt >= attempts) throw failure;
      await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 4 ** (attempt - 1)));
    }
  }
}
