/**
 * The soak run's peers, each able to misbehave on cue: an SMTP server (smtp-server) that counts every
 * message per address and can stall after connect or hold DATA and then drop, and a feed server (the
 * tests' fixture server) with a wire feed that grows, a feed that trickles and one that never ends, and a
 * PURGE_URL sink that can hang.
 */
import type http from 'node:http';
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startFeedServer, type FeedServer, type Route } from '../../tests/fixtures/feeds/feed-server.ts';

export type SoakSmtp = {
  url: string;
  /** Messages accepted (answered 250) per recipient address. */
  perAddress: Map<string, number>;
  accepted: () => number;
  /** From the next message on (once `afterAccepted` messages are in), DATA is never answered until `dropHeld`. */
  holdDataAfter: (afterAccepted: number) => void;
  /** Closes every connection waiting for its DATA answer, unanswered (the message is not kept); answers how many. */
  dropHeld: () => number;
  /** While on, new connections get no greeting; turning it off greets the ones waiting. */
  holdGreetings: (on: boolean) => void;
  /** What the faults did: messages held then dropped, greetings held. */
  stats: { dropped: number; greetingsHeld: number };
  stop: () => Promise<void>;
};

/** The SMTP server the servers send through (SMTP_URL), in the bench's process. */
export async function startSoakSmtp(): Promise<SoakSmtp> {
  const perAddress = new Map<string, number>();
  let accepted = 0;
  let holdAfter = Infinity;
  let greetingsHeld = false;
  const waitingGreetings: (() => void)[] = [];
  const heldSessions = new Set<string>();
  const stats = { dropped: 0, greetingsHeld: 0 };
  const server: SMTPServer = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // A stop must not wait 30 s for the servers' pooled connections.
    closeTimeout: 500,
    onConnect(_session, callback) {
      if (!greetingsHeld) return callback();
      stats.greetingsHeld++;
      waitingGreetings.push(() => callback());
    },
    onData(stream, session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        if (accepted >= holdAfter) {
          // Never answered: the client waits on its socket timeout until the fault drops the connection.
          heldSessions.add(session.id);
          return;
        }
        accepted++;
        for (const address of session.envelope.rcptTo.map((r) => r.address.toLowerCase()))
          perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    perAddress,
    accepted: () => accepted,
    holdDataAfter: (afterAccepted) => {
      holdAfter = afterAccepted;
    },
    dropHeld: () => {
      holdAfter = Infinity;
      let dropped = 0;
      for (const connection of server.connections) {
        if (!heldSessions.has(connection.id)) continue;
        // smtp-server keeps the socket private; destroying it is what a crashed mail server does.
        (connection as unknown as { _socket: net.Socket })._socket.destroy();
        dropped++;
      }
      heldSessions.clear();
      stats.dropped += dropped;
      return dropped;
    },
    holdGreetings: (on) => {
      greetingsHeld = on;
      if (!on) for (const greet of waitingGreetings.splice(0)) greet();
    },
    stats,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type WireItem = { n: number; link: string; title: string };
export type HostileConnection = { kind: 'trickle' | 'endless' | 'purge'; startedAt: number; ms?: number; bytes: number; stillOpen?: true };

export type SoakFeeds = {
  /** The growing feed (one new item per request), and the two that misbehave during the slow-peers fault. */
  wireUrl: string;
  trickleUrl: string;
  endlessUrl: string;
  /** PURGE_URL: answers 204, or hangs while `hostile` is on. */
  purgeUrl: string;
  /** Every item the wire feed ever listed, in order. */
  wireItems: WireItem[];
  /** When each wire request arrived (ms, performance.now() of the bench). */
  wireRequests: number[];
  /**
   * Each hostile or purge answer given while hostile: its kind, how long it stayed open, the bytes sent, and
   * `stillOpen` when the server had not given up on it by the fault's end (the peer closed it then).
   */
  hostileConnections: HostileConnection[];
  purgeRequests: () => number;
  /** From now on the wire lists the same items (the run is settling: no new work). */
  freezeWire: () => void;
  /** While on, one feed trickles, another never ends, and the purge sink hangs. */
  setHostile: (on: boolean) => void;
  /** Ends every hostile answer still open (the fault is over); answers how many were still open. */
  endHostile: () => number;
  close: () => Promise<void>;
};

/** The wire keeps this many newest items: an item stays in the feed for this many fetches. */
const WIRE_WINDOW = 20;

function rss(title: string, items: string): string {
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>${title}</title><link>http://127.0.0.1/</link><description>${title}</description>${items}</channel></rss>`;
}

/** The feed and purge peers on one local HTTP server (tests/fixtures/feeds/feed-server.ts). */
export async function startSoakFeeds(): Promise<SoakFeeds> {
  const feeds: FeedServer = await startFeedServer();
  const wireItems: WireItem[] = [];
  const wireRequests: number[] = [];
  const hostileConnections: HostileConnection[] = [];
  const open = new Map<http.ServerResponse, HostileConnection>();
  let hostile = false;
  let frozen = false;
  let purgeRequests = 0;

  feeds.route('/wire.xml', (_req, res) => {
    wireRequests.push(performance.now());
    const n = wireItems.length + 1;
    if (!frozen) wireItems.push({ n, link: `${feeds.url}/wire/${n}`, title: `Soak wire report ${n}` });
    const items = wireItems
      .slice(-WIRE_WINDOW)
      .map(
        (item) =>
          `<item><title>${item.title}</title><link>${item.link}</link><guid>soak-wire-${item.n}</guid><pubDate>${new Date().toUTCString()}</pubDate><description>Agency copy ${item.n} about the harbour vote.</description></item>`,
      )
      .join('');
    res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
    res.end(rss('Soak Wire', items));
  });

  /** A feed that misbehaves as `kind` while the fault lasts, and lists one calm item otherwise. */
  const hostileFeed =
    (kind: 'trickle' | 'endless'): Route =>
    (_req, res) => {
      const name = kind === 'trickle' ? 'Soak Trickle' : 'Soak Endless';
      if (!hostile) {
        res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
        res.end(rss(name, `<item><title>Calm day</title><link>${feeds.url}/${kind}/1</link><guid>soak-${kind}-1</guid></item>`));
        return;
      }
      const record: HostileConnection = { kind, startedAt: performance.now(), bytes: 0 };
      hostileConnections.push(record);
      open.set(res, record);
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      const head = `<?xml version="1.0"?><rss version="2.0"><channel><title>${name}</title>`;
      res.write(head);
      record.bytes += head.length;
      let timer: NodeJS.Timeout | undefined;
      res.on('close', () => {
        clearTimeout(timer);
        open.delete(res);
        record.ms ??= performance.now() - record.startedAt;
      });
      if (kind === 'trickle') {
        // One byte every half second: under any size limit, so only the fetch's deadline can end it.
        const drip = () => {
          if (res.destroyed) return;
          res.write('<');
          record.bytes++;
          timer = setTimeout(drip, 500);
        };
        drip();
      } else {
        // Valid XML comments as fast as the client reads: only the size limit (or the deadline) can end it.
        const chunk = `<!-- ${'x'.repeat(65_000)} -->`;
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) record.bytes += chunk.length;
          if (!res.destroyed) {
            record.bytes += chunk.length;
            res.once('drain', pump);
          }
        };
        pump();
      }
    };
  feeds.route('/trickle.xml', hostileFeed('trickle'));
  feeds.route('/endless.xml', hostileFeed('endless'));

  feeds.route('/purge', (req, res) => {
    purgeRequests++;
    req.resume();
    if (!hostile) {
      res.writeHead(204);
      res.end();
      return;
    }
    const record: HostileConnection = { kind: 'purge', startedAt: performance.now(), bytes: 0 };
    hostileConnections.push(record);
    open.set(res, record);
    // Never answered while the fault lasts: a CDN that hangs.
    res.on('close', () => {
      open.delete(res);
      record.ms ??= performance.now() - record.startedAt;
    });
  });

  return {
    wireUrl: `${feeds.url}/wire.xml`,
    trickleUrl: `${feeds.url}/trickle.xml`,
    endlessUrl: `${feeds.url}/endless.xml`,
    purgeUrl: `${feeds.url}/purge`,
    wireItems,
    wireRequests,
    hostileConnections,
    purgeRequests: () => purgeRequests,
    freezeWire: () => {
      frozen = true;
    },
    setHostile: (on) => {
      hostile = on;
    },
    endHostile: () => {
      const still = open.size;
      for (const [res, record] of open) {
        record.stillOpen = true;
        res.destroy();
      }
      return still;
    },
    close: () => feeds.close(),
  };
}
