/**
 * One-time upload URLs: /api/images/upload/{token}?expires=...&sig=HMAC. The signature is the
 * authority for the PUT (no session needed); a claim file makes each URL usable once.
 */
import { randomBytes } from 'node:crypto';
import { isSameSecret, signMessage } from '../../security/secrets.ts';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Runtime } from '../runtime.ts';

/** How long an upload URL can be used. */
export const UPLOAD_URL_TTL_MS = 10 * 60 * 1000;
/** Uploads and claims older than this are swept (well past any valid URL). */
const SWEEP_AFTER_MS = 60 * 60 * 1000;
const TOKEN = /^[A-Za-z0-9_-]{22,64}$/;
export const UPLOAD_PATH = /^\/api\/images\/upload\/([A-Za-z0-9_-]{22,64})$/;

const SECRET_KEY = 'appSecret';
const secrets = new WeakMap<Runtime, Promise<string>>();

/** The HMAC secret: APP_SECRET when configured, else one generated on first use and kept in the store's meta. */
export function getAppSecret(runtime: Runtime): Promise<string> {
  if (runtime.config.APP_SECRET) return Promise.resolve(runtime.config.APP_SECRET);
  let secret = secrets.get(runtime);
  if (!secret) {
    secret = (async () => {
      const stored = await runtime.store.meta.get<string>(SECRET_KEY);
      if (stored) return stored;
      // Servers sharing a database that start together must agree on one secret: the first stored wins.
      return runtime.store.meta.setIfAbsent(SECRET_KEY, randomBytes(32).toString('base64url'));
    })();
    secrets.set(runtime, secret);
  }
  return secret;
}

/** Folders of received uploads and of used-URL claims, under DATA_DIR. */
export function uploadDirs(runtime: Runtime): { uploads: string; claims: string } {
  const root = path.resolve(runtime.config.DATA_DIR, 'tmp');
  return { uploads: path.join(root, 'uploads'), claims: path.join(root, 'upload-claims') };
}

function sign(secret: string, token: string, expires: number): string {
  return signMessage(secret, `image-upload\n${token}\n${expires}`, 'base64url');
}

/** Removes uploads and claims left behind by abandoned or expired URLs. */
async function sweepOldUploads(runtime: Runtime, now: number): Promise<void> {
  for (const dir of Object.values(uploadDirs(runtime))) {
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      const stat = await fs.stat(file).catch(() => undefined);
      if (stat && now - stat.mtimeMs > SWEEP_AFTER_MS) await fs.rm(file, { force: true });
    }
  }
}

/** A fresh one-time upload URL (a path on this server), valid for UPLOAD_URL_TTL_MS. */
export async function createUploadUrl(runtime: Runtime, now = Date.now()): Promise<string> {
  await sweepOldUploads(runtime, now);
  const token = randomBytes(18).toString('base64url');
  const expires = now + UPLOAD_URL_TTL_MS;
  const sig = sign(await getAppSecret(runtime), token, expires);
  return `/api/images/upload/${token}?expires=${expires}&sig=${sig}`;
}

export type UploadUrlCheck = 'valid' | 'forged' | 'expired';

/** Checks an upload URL's signature, then its expiry (a forged URL is never told it expired). */
export async function checkUploadUrl(
  runtime: Runtime,
  token: string,
  expires: string | null,
  sig: string | null,
  now = Date.now(),
): Promise<UploadUrlCheck> {
  if (!TOKEN.test(token) || !expires || !/^\d{1,15}$/.test(expires) || !sig) return 'forged';
  if (!isSameSecret(sig, sign(await getAppSecret(runtime), token, Number(expires)))) return 'forged';
  return Number(expires) < now ? 'expired' : 'valid';
}
