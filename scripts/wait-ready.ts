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

/** What /api/ready answers (its status, and the reason when not ready), or undefined while nothing answers. */
async function probe(): Promise<{ status: number; reason?: string } | undefined> {
  try {
    const response = await fetch(`${origin}/api/ready`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json().catch(() => ({}))) as { reason?: unknown };
    return { status: response.status, ...(typeof body.reason === 'string' ? { reason: body.reason } : {}) };
  } catch {
    return undefined;
  }
}

const deadline = Date.now() + timeoutMs;
for (;;) {
  const answer = await probe();
  if (answer?.status === 200) {
    console.log(`Ready: ${origin}`);
    process.exit(0);
  }
  if (Date.now() > deadline) {
    console.error(
      `Not ready after ${values.timeout} s at ${origin} (last answer: ${answer ? `${answer.status}${answer.reason ? `, ${answer.reason}` : ''}` : 'none'}): see the server's log (journalctl -u meridian).`,
    );
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
}
