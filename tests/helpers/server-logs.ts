/**
 * The logs of a test run's servers: each server's output appended to a file under
 * MERIDIAN_SERVER_LOGS (set by `npm test` for the whole run), and the scan `npm test` runs over
 * them at the end for anything that must never reach a log.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Appends everything `child` prints to a file of its own under MERIDIAN_SERVER_LOGS, when the run set it. */
export function recordServerOutput(child: ChildProcess, label: string): void {
  const dir = process.env.MERIDIAN_SERVER_LOGS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${label.replace(/[^\w.-]+/g, '_')}-${child.pid ?? 'x'}-${Date.now()}.log`);
  const write = (chunk: Buffer) => fs.appendFileSync(file, chunk);
  child.stdout?.on('data', write);
  child.stderr?.on('data', write);
}

/**
 * Passwords the tests sign in, create users or fail sign-ins with (and the suite's METRICS_TOKEN):
 * read from the test sources, so a new test's password is covered without being listed here.
 */
export function knownTestSecrets(root: string): string[] {
  const found = new Set<string>();
  const files = [
    ...fs.readdirSync(path.join(root, 'tests'), { recursive: true, encoding: 'utf8' }).map((name) => path.join(root, 'tests', name)),
    path.join(root, 'playwright.config.ts'),
  ].filter((file) => /\.ts$/.test(file) && fs.statSync(file).isFile());
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\b(?:password|PASSWORD|METRICS_TOKEN|newPassword)['"]?\s*[:=]\s*['"]([^'"\s]{8,})['"]/g))
      found.add(match[1]!);
  }
  return [...found];
}

/** What may never appear in a log, by shape: each a name and a pattern. */
const FORBIDDEN_SHAPES: readonly [string, RegExp][] = [
  // Session tokens and newsletter tokens: 20 random bytes in lowercase base32.
  ['a session or newsletter token', /(?<![A-Za-z0-9])[a-z2-7]{32}(?![A-Za-z0-9])/],
  // generatePassword(): 4 groups of 5 base32 characters.
  ['a generated password', /(?<![A-Za-z0-9-])[a-z2-7]{5}-[a-z2-7]{5}-[a-z2-7]{5}-[a-z2-7]{5}(?![A-Za-z0-9-])/],
  ['a full e-mail address', /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/],
  ['a cookie header', /\b(?:set-)?cookie\b["']?\s*[:=]\s*["']?(?!\[redacted\])[^\s"']+=/i],
  ['a bearer token', /\bBearer\s+(?!\[redacted\])[A-Za-z0-9._~+/-]{8,}/],
  ['a token in a query string', /[?&](?:token|sig)=[^&\s"]+/],
  ['a password hash', /\$argon2(?:id|i|d)\$/],
  // Stripe's API keys and webhook signing secrets (issue 48).
  ['a Stripe key or webhook secret', /\b(?:(?:sk|rk)_(?:test|live)|whsec)_[A-Za-z0-9]{8,}/],
];

/** Every line of `text` that shows one of `secrets` or a forbidden shape, with what it showed. */
export function findLeaks(text: string, secrets: readonly string[]): { line: string; what: string }[] {
  const leaks: { line: string; what: string }[] = [];
  // A short value (a hint cookie's "1") is no secret, and would match every line.
  secrets = secrets.filter((secret) => secret.length >= 8);
  for (const line of text.split('\n')) {
    for (const secret of secrets) if (line.includes(secret)) leaks.push({ line, what: 'a test password or token' });
    for (const [what, shape] of FORBIDDEN_SHAPES) if (shape.test(line)) leaks.push({ line, what });
  }
  return leaks;
}

/** Scans every log file under `dir`; answers the leaks with their file (secrets shown masked). */
export function scanServerLogs(dir: string, secrets: readonly string[]): { file: string; what: string; line: string }[] {
  if (!fs.existsSync(dir)) return [];
  const found: { file: string; what: string; line: string }[] = [];
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    for (const leak of findLeaks(fs.readFileSync(file, 'utf8'), secrets)) {
      found.push({ file: name, what: leak.what, line: leak.line.slice(0, 300) });
    }
  }
  return found;
}
