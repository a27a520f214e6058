/** Signs a reader in through the real flow (issue 48): the sign-in API, the link from the mail in DATA_DIR/outbox/, the confirm URL. */
import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import type { PublicMember } from '../../src/schemas/member.ts';

let nextIp = 1;

/** The mails written to a server's outbox for one address, oldest first (file names carry the address and a sortable stamp). */
export function outboxFilesFor(dataDir: string, email: string): string[] {
  const dir = path.join(dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((file) => file.includes(`-${email.toLowerCase()}-`))
    .sort()
    .map((file) => path.join(dir, file));
}

/** A mail file as a mail client reads it. */
export async function readMail(file: string): Promise<{ subject: string; html: string; text: string }> {
  const mail = await simpleParser(fs.readFileSync(file));
  return { subject: mail.subject ?? '', html: typeof mail.html === 'string' ? mail.html : '', text: mail.text ?? '' };
}

/** The sign-in link of the newest mail to an address, as a path (`/api/members/confirm?token=...`). */
export async function latestSignInLink(dataDir: string, email: string): Promise<string> {
  const files = outboxFilesFor(dataDir, email);
  for (const file of files.reverse()) {
    const match = /\/api\/members\/confirm\?token=[a-z2-7]{32}/.exec((await readMail(file)).text);
    if (match) return match[0];
  }
  throw new Error(`No sign-in mail for ${email} in ${dataDir}/outbox`);
}

/**
 * Asks for a link (as a client of its own address, for the per-IP limit when the server trusts a proxy),
 * follows it, and answers the member session cookie (`member_session=...`) and the member as /api/members/me has it.
 */
export async function signInMember(
  serverUrl: string,
  dataDir: string,
  email: string,
  name?: string,
): Promise<{ cookie: string; member: PublicMember }> {
  const ip = `10.250.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`;
  const before = new Set(outboxFilesFor(dataDir, email));
  const asked = await fetch(new URL('/api/members/sign-in', serverUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: serverUrl, 'X-Forwarded-For': ip },
    body: JSON.stringify({ email, ...(name === undefined ? {} : { name }) }),
  });
  if (asked.status !== 200) throw new Error(`Sign-in request failed: ${asked.status} ${await asked.text()}`);
  // The newest new mail with a link (a welcome mail of an earlier sign-up may land beside it).
  let link: string | undefined;
  for (const file of outboxFilesFor(dataDir, email)
    .filter((name) => !before.has(name))
    .reverse()) {
    link = /\/api\/members\/confirm\?token=[a-z2-7]{32}/.exec((await readMail(file)).text)?.[0];
    if (link) break;
  }
  if (!link) throw new Error(`No sign-in mail for ${email} arrived in ${dataDir}/outbox`);
  const confirmed = await fetch(new URL(link, serverUrl), { redirect: 'manual' });
  if (confirmed.status !== 303) throw new Error(`Following the sign-in link answered ${confirmed.status}`);
  const session = confirmed.headers
    .getSetCookie()
    .map((header) => header.split(';')[0]!)
    .find((pair) => pair.startsWith('member_session=') && pair.length > 'member_session='.length);
  if (!session) throw new Error(`Following the sign-in link set no member session (Location: ${confirmed.headers.get('location')})`);
  const me = await fetch(new URL('/api/members/me', serverUrl), { headers: { Cookie: session } });
  if (me.status !== 200) throw new Error(`GET /api/members/me answered ${me.status} right after signing in`);
  return { cookie: session, member: ((await me.json()) as { member: PublicMember }).member };
}
