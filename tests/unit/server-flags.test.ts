/** The server's Node flags are given once (scripts/server-process.ts): `npm start` and `npm run serve` run it with the same ones. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../../scripts/server-process.ts';
import { ROOT } from '../helpers/server.ts';

describe('server flags', () => {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it.each([
    ['start', 'scripts/start.ts'],
    ['serve', 'scripts/serve.ts'],
  ])('npm run %s starts %s with them', (name, script) => {
    expect(scripts[name]).toBe(['node', ...SERVER_NODE_FLAGS, script].join(' '));
  });
});
