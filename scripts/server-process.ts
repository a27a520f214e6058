/**
 * The server's process from outside: its Node flags, whether its port is free, and waiting for a
 * spawned server to print its address. Shared by `npm start`, the test harness and the benches.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';

/**
 * Node flags the server runs with: package.json's `start` and `serve` give them (a unit test keeps
 * them equal), the test harness and the benches spawn the server with them.
 *
 * `--max-semi-space-size=16`: a young generation of 2 x 16 MB. Left to itself, V8 sizes it from the
 * heap limit (2 x 64 MB on a 24 GB machine, 2 x 32 MB with an 8 GB limit), and what each young
 * collection copies grows with it: during a burst of writes a share of what the server allocates
 * outlives one collection, most of it for good, and the collection that copies it stops the event
 * loop (docs/performance.md, 2026-11-26 entry on a 16 MB young generation).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=16'] as const;

export type ServerOutput = {
  /** The address the server printed ("Listening on ..."), with localhost spelled 127.0.0.1. */
  url: string;
  /** Everything the server printed so far (its tail only, past `maxOutputChars`). */
  output: () => string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
};

/** Collects the child's stdout and stderr and resolves once it listens; rejects if it exits first or takes longer than `timeoutMs`. */
export async function waitForListening(child: ChildProcess, timeoutMs: number, maxOutputChars = Infinity): Promise<ServerOutput> {
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Server did not start in ${timeoutMs / 1000} s:\n${output.slice(-3000)}`)), timeoutMs);
    let listening = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // A long-running server's log is kept bounded: its tail is what a caller reads.
      if (output.length > maxOutputChars) output = output.slice(-Math.floor(maxOutputChars / 2));
      if (listening) return;
      const match = /Listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) {
        listening = true;
        clearTimeout(timer);
        resolve(match[1]!.replace('localhost', '127.0.0.1'));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Server exited with code ${code}:\n${output.slice(-3000)}`));
    });
  });
  return { url, output: () => output, exited };
}

/** A free TCP port on the loopback interface (for a child that must be told its port up front). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** What `npm start` and `npm run serve` print when another process already listens on the port. */
export function portTakenMessage(host: string, port: number): string {
  return `Cannot start: port ${port} on ${host} is already in use (another Meridian server, or another program). Stop it, or choose another port: PORT=4322 npm start`;
}

/** Whether something already listens on `port` at `host` (probed by listening there for an instant). */
export function portTaken(host: string, port: number): Promise<boolean> {
  if (port === 0) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)));
    probe.listen(port, host, () => probe.close(() => resolve(false)));
  });
}
