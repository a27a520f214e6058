/**
 * `npm run bench:briefing [-- --subscribers N]`: sends one briefing to N confirmed subscribers (default
 * 2,000) through `npm run briefing` into a local SMTP server (smtp-server, counting only), and reports
 * the send rate, the send log's size and a second same-day run. Writes bench/results/briefing.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { openStore } from '../src/store/index.ts';
import { benchStory } from './stories.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { subscribers: { type: 'string', default: '2000' }, keep: { type: 'boolean', default: false } } });
const count = Number(values.subscribers);
if (!Number.isInteger(count) || count < 1) throw new Error('--subscribers takes a positive integer');

async function seed(dataDir: string): Promise<void> {
  const store = await openStore(dataDir, 'write');
  const now = new Date().toISOString();
  for (let i = 0; i < 6; i++) {
    await store.articles.insert(benchStory(i, now, { isEditorsPick: i < 2 }));
  }
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(7, '0');
    await store.subscribers.upsert({
      id: `bench-sub-${n}`,
      email: `reader${n}@example.com`,
      token: `benchtoken${n}000000`,
      createdAt: now,
      confirmedAt: now,
    });
  }
  await store.close();
}

let received = 0;
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      received++;
      callback();
    });
  },
});
await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
const port = (smtp.server.address() as { port: number }).port;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-bench-briefing-'));
const rows: { figure: string; value: string }[] = [];
try {
  const seeded = performance.now();
  await seed(dataDir);
  rows.push({ figure: `seed ${count} confirmed subscribers`, value: `${((performance.now() - seeded) / 1000).toFixed(1)} s` });
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    SITE_URL: 'https://news.example',
    NODE_ENV: 'production',
  };
  // Asynchronous on purpose: the SMTP server lives in this process and must keep answering.
  const run = () =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      const child = spawn(process.execPath, [path.join(root, 'scripts/briefing.ts')], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.once('exit', (code) =>
        code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`npm run briefing failed:\n${output}`)),
      );
    });
  // The script and the SMTP server run on the same machine: the figure is our side plus a local SMTP hop.
  const first = await run();
  const logDir = path.join(dataDir, 'briefings');
  const logBytes = fs.readdirSync(logDir).reduce((sum, f) => sum + fs.statSync(path.join(logDir, f)).size, 0);
  rows.push({
    figure: `npm run briefing, ${count} recipients (3 SMTP connections)`,
    value: `${first.toFixed(1)} s, ${(count / first).toFixed(0)} mails/s`,
  });
  rows.push({ figure: 'mails the SMTP server accepted', value: String(received) });
  rows.push({
    figure: 'send log on disk (append-only)',
    value: `${(logBytes / 1024).toFixed(0)} KB, ${(logBytes / count).toFixed(0)} bytes per recipient`,
  });
  const second = await run();
  rows.push({ figure: 'second run the same day (sends nothing)', value: `${second.toFixed(2)} s, ${received - count} more mails` });
  rows.push({ figure: '1-minute load average', value: os.loadavg()[0]!.toFixed(2) });
  console.table(rows);
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'bench/results/briefing.json'),
    JSON.stringify({ subscribers: count, takenAt: new Date().toISOString(), rows }, null, 2) + '\n',
  );
} finally {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  if (!values.keep) fs.rmSync(dataDir, { recursive: true, force: true });
  else console.log(`Data kept in ${dataDir}`);
}
