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
  readonly temporary: boolean;
  constructor(message: string, temporary: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = 'MailError';
    this.temporary = temporary;
  }
}

/** Network failures and SMTP 4xx answers are worth another try; 5xx answers and bad addresses are not. */
const TEMPORARY_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH']);

function classify(error: unknown): MailError {
  if (error instanceof MailError) return error;
  const { code, responseCode, message } = error as { code?: string; responseCode?: number; message?: string };
  const temporary = typeof responseCode === 'number' ? responseCode >= 400 && responseCode < 500 : code !== undefined && TEMPORARY_CODES.has(code);
  return new MailError(message ?? String(error), temporary, error);
}

/** The From header: MAIL_FROM, else the site's name and contact address. */
export function mailFrom(config: Config): string {
  return config.MAIL_FROM ?? `"${config.SITE_NAME.replace(/["\\]/g, '')}" <${config.SITE_EMAIL}>`;
}

/** Writes a file atomically (temp file + rename): a reader never sees half a message. */
function writeFileAtomic(file: string, data: Buffer): void {
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, data);
  fs.renameSync(temp, file);
}

/** Orders outbox files written within the same millisecond. */
let outboxSequence = 0;

/** Opens the mailer the configuration asks for. */
export function createMailer(config: Config): Mailer {
  const from = mailFrom(config);
  const siteHost = new URL(config.SITE_URL).hostname;
  if (config.SMTP_URL) {
    // A pool keeps a few connections open across a batch instead of one TLS handshake per recipient.
    const transport = nodemailer.createTransport(config.SMTP_URL + (config.SMTP_URL.includes('?') ? '&' : '?') + 'pool=true&maxConnections=3');
    const url = new URL(config.SMTP_URL);
    return {
      destination: `${url.protocol}//${url.host}`,
      async send(message) {
        try {
          const info = await transport.sendMail({ from, ...message, messageId: message.messageId ?? `<${randomBytes(12).toString('hex')}@${siteHost}>` });
          return { messageId: info.messageId };
        } catch (error) {
          throw classify(error);
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

/** Sends with retries on temporary failures (1 s, 4 s between tries); throws the last error. */
export async function sendWithRetry(mailer: Mailer, message: MailMessage, attempts = 3, baseDelayMs = 1000): Promise<{ messageId: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await mailer.send(message);
    } catch (error) {
      const failure = classify(error);
      if (!failure.temporary || attempt >= attempts) throw failure;
      await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 4 ** (attempt - 1)));
    }
  }
}
