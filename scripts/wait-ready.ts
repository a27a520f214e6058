/**
 * The systemd unit's ExecStartPost: waits until the server at HOST:PORT answers ready, so `systemctl
 * start` (and units ordered after it) return only once it serves. Node has no sd_notify for Type=notify.
 */
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config.ts';

const { values } = parseArgs({ options: { timeout: { type: 'string', default: '170' } } });
const timeoutMs = Number(values.timeout) * 1000;
const { HOST, PORT } = parseConfig();
// The server listens on every interface of its kind: ask it on the loopback one.
const host = HOST === '0.0.0.0' ? '127.0.0.1' : HOST === '::' ? '[::1]' : HOST.includes(':') ? `[${HOST}]` : HOST;
const origin = `http://${host}:${PORT}`;

/** The status of `pathname` at the server, or undefined while nothing answers. */
async function probe(pathname: string): Promise<number | undefined> {
  try {
    const response = await fetch(`${origin}${pathname}`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return undefined;
  }
}

const deadline = Date.now() + timeoutMs;
for (;;) {
  const ready = await probe('/api/ready');
  // TODO(lead): /api/ready comes with the readiness work; until it is merged the server answers 404 there,
  // and /api/health (which answers once the store is open and the server listens) stands in for it.
  const status = ready === 404 ? await probe('/api/health') : ready;
  if (status === 200) {
    console.log(`Ready: ${origin}`);
    process.exit(0);
  }
  if (Date.now() > deadline) {
    console.error(
      `Not ready after ${values.timeout} s at ${origin} (last answer: ${status ?? 'none'}): see the server's log (journalctl -u meridian).`,
    );
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
