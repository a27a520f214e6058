/** A real SMTP server for tests (the smtp-server package): keeps every message it accepted, parsed with mailparser. */
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export const SMTP_USER = { user: 'mailer', pass: 'smtp-secret' } as const;

export type ReceivedMail = { to: string[]; raw: string; parsed: ParsedMail };

export type TestSmtp = {
  /** smtp://user:pass@127.0.0.1:port */
  url: string;
  /** Messages the server accepted (answered 250), in order. */
  messages: ReceivedMail[];
  /** Messages to `address`, accepted so far. */
  to(address: string): ReceivedMail[];
  /** Waits until `count` messages to `address` were accepted. */
  waitFor(address: string, count?: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Never answers DATA for the next message to `address` (the client waits); resolves when that message arrived. */
  holdNext(address: string): Promise<void>;
  stop(): Promise<void>;
};

export async function startSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const holds = new Map<string, () => void>();
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER.user && auth.password === SMTP_USER.pass) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const held = to.find((address) => holds.has(address));
        if (held) {
          // Leave the client waiting for our answer: as if the process were killed mid-transaction.
          const arrived = holds.get(held)!;
          holds.delete(held);
          arrived();
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            messages.push({ to, raw, parsed });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const to = (address: string) => messages.filter((m) => m.to.includes(address.toLowerCase()));
  return {
    url: `smtp://${SMTP_USER.user}:${SMTP_USER.pass}@127.0.0.1:${port}`,
    messages,
    to,
    async waitFor(address, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (to(address).length < count) {
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${count} message(s) to ${address}; got ${to(address).length}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return to(address);
    },
    holdNext(address) {
      return new Promise<void>((resolve) => holds.set(address.toLowerCase(), resolve));
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
