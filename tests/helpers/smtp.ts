/**
 * A real SMTP server for tests (the smtp-server package): keeps every message it accepted, parsed
 * with mailparser, and can be made to fail as mail servers do (stall, drop after DATA, refuse for now).
 */
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export const SMTP_USER = { user: 'mailer', pass: 'smtp-secret' } as const;

export type ReceivedMail = { to: string[]; raw: string; parsed: ParsedMail };

/**
 * - `stall`: a server that hangs: new connections are accepted (TCP) and never greeted, and the open
 *   ones are cut when the fault starts (as when the process is restarted and then hangs).
 * - `drop-after-data`: each message is kept (counted as received) and the connection dropped before
 *   the answer to DATA: the client cannot know whether it was accepted.
 * - `refuse`: every recipient is answered 451 (a temporary refusal), so nothing is accepted.
 */
export type SmtpFault = 'stall' | 'drop-after-data' | 'refuse';

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
  /** Starts a fault now, or ends it (undefined). */
  fault(fault: SmtpFault | undefined): void;
  /** Starts a fault once `count` more messages were accepted (after the last one's answer went out); resolves then. */
  faultAfter(count: number, fault: SmtpFault): Promise<void>;
  /** Connections accepted so far (stalled ones included). */
  connections(): number;
  /** Recipients answered 451 so far (the `refuse` fault). */
  refusals(): number;
  stop(): Promise<void>;
};

export async function startSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const holds = new Map<string, () => void>();
  let current: SmtpFault | undefined;
  let pending: { at: number; fault: SmtpFault; started: () => void } | undefined;
  const sockets = new Map<string, net.Socket>();
  let accepted = 0;
  let refused = 0;
  const socketOf = (session: { remoteAddress: string; remotePort: number }) =>
    sockets.get(`${session.remoteAddress}:${session.remotePort}`);
  const setFault = (fault: SmtpFault | undefined) => {
    current = fault;
    // A hung server's open connections go too: the pool's clients must reconnect (and meet the stall).
    if (fault === 'stall') for (const socket of sockets.values()) socket.destroy();
  };
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onConnect(_session, callback) {
      // Stalled: the TCP connection stands, the greeting never comes.
      if (current !== 'stall') callback();
    },
    onRcptTo(_address, _session, callback) {
      if (current === 'refuse') {
        refused++;
        callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 }));
      } else callback();
    },
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
        const dropping = current === 'drop-after-data';
        simpleParser(raw).then(
          (parsed) => {
            messages.push({ to, raw, parsed });
            if (dropping) {
              // Kept, but the client never hears so: it may or may not count it as sent.
              socketOf(session)?.destroy();
              return;
            }
            callback();
            if (pending && messages.length >= pending.at) {
              const { fault, started } = pending;
              pending = undefined;
              // After this message's 250 has left, so it counts as sent on both sides.
              setTimeout(() => {
                setFault(fault);
                started();
              }, 20);
            }
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  // A client killed mid-transaction (the tests do) resets its connection: smtp-server reports it as an
  // 'error' event, which would be an uncaught exception without a listener.
  server.on('error', () => {});
  server.server.on('connection', (socket: net.Socket) => {
    accepted++;
    const key = `${socket.remoteAddress}:${socket.remotePort}`;
    sockets.set(key, socket);
    socket.once('close', () => sockets.delete(key));
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
    fault: setFault,
    faultAfter(count, fault) {
      return new Promise<void>((resolve) => {
        pending = { at: messages.length + count, fault, started: resolve };
      });
    },
    connections: () => accepted,
    refusals: () => refused,
    stop: () =>
      new Promise<void>((resolve) => {
        // Stalled connections would hold close() until the server's own idle timeout.
        for (const socket of sockets.values()) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
