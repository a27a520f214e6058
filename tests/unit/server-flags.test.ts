/**
 * The server's Node flags are given once (scripts/server-process.ts): `npm start`, `npm run serve` and
 * the systemd unit (deploy/meridian.service) run it with the same ones.
 */
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

  it("the systemd unit's ExecStart runs scripts/serve.ts with them, on the project's Node", () => {
    const unit = fs.readFileSync(path.join(ROOT, 'deploy/meridian.service'), 'utf8');
    const execStart = unit.split('\n').filter((line) => line.startsWith('ExecStart='));
    expect(execStart).toEqual([['ExecStart=/srv/meridian/node_modules/.bin/node', ...SERVER_NODE_FLAGS, 'scripts/serve.ts'].join(' ')]);
  });
});
