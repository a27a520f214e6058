/** The release number: APP_VERSION is package.json's version, a valid semver, named alike in the lock file and the changelog. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_VERSION } from '../../src/server/version.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const readJson = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as { version: string; packages: Record<string, { version?: string }> };

// The expression semver.org suggests for a valid version (https://semver.org/#is-there-a-suggested-regular-expression-regex-to-check-a-semver-string).
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

describe('APP_VERSION', () => {
  it("is package.json's version, and package-lock.json names the same", () => {
    expect(APP_VERSION).toBe(readJson('package.json').version);
    const lock = readJson('package-lock.json');
    expect(lock.version).toBe(APP_VERSION);
    expect(lock.packages['']!.version).toBe(APP_VERSION);
  });

  it('is a valid semantic version', () => {
    expect(APP_VERSION).toMatch(SEMVER);
    for (const bad of ['1.0', 'v1.0.0', '01.0.0', '1.0.0-', '1.0.0 ']) expect(bad).not.toMatch(SEMVER);
    expect('1.2.3-rc.1+build.5').toMatch(SEMVER);
  });

  it('has its entry in CHANGELOG.md', () => {
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(new RegExp(`^## \\[${APP_VERSION.replace(/\./g, '\\.')}\\]`, 'm'));
  });
});
