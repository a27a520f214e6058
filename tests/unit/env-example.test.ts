/** .env.example cannot drift: every variable of the config schema is there once, with one line of meaning and its real default. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config.ts';
import { parseProductionConfig } from '../../src/server/production.ts';
import { ROOT } from '../helpers/server.ts';

/** Variables read outside the schema (scripts, the store, the runtime) or by services that parse their own. */
const OTHER_KEYS = ['NODE_ENV', 'DATABASE_POOL_SIZE', 'OUT_DIR', 'SERVE_DIR'];

type Entry = { key: string; value: string; commented: boolean; meaning: string };

/** The KEY=value lines of the file, set or commented out, each with the comment line above it. */
function readEntries(): Entry[] {
  const lines = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8').split('\n');
  const entries: Entry[] = [];
  lines.forEach((line, index) => {
    const match = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!match) return;
    const above = lines[index - 1] ?? '';
    // Double quotes are the file's own (systemd and sh both remove them), not the value's.
    const value = /^"(.*)"$/.exec(match[3]!)?.[1] ?? match[3]!;
    entries.push({ key: match[2]!, value, commented: Boolean(match[1]), meaning: above.startsWith('# ') ? above.slice(2) : '' });
  });
  return entries;
}

describe('.env.example', () => {
  const entries = readEntries();
  const defaults = parseProductionConfig({}) as Record<string, unknown>;

  it('lists every variable of the config schema, and only known ones, once each', () => {
    const keys = entries.map((entry) => entry.key);
    expect(new Set(keys).size, 'a variable is listed twice').toBe(keys.length);
    expect(CONFIG_KEYS.filter((key) => !keys.includes(key))).toEqual([]);
    expect(keys.filter((key) => !(CONFIG_KEYS as readonly string[]).includes(key) && !OTHER_KEYS.includes(key))).toEqual([]);
  });

  it('gives each one a line of meaning above it', () => {
    for (const entry of entries) {
      expect(entry.meaning, entry.key).not.toBe('');
      expect(entry.meaning, entry.key).not.toMatch(/^[A-Z][A-Z0-9_]*=/);
    }
  });

  it('shows the default production mode uses on a commented line, and names it when the line sets another value', () => {
    for (const { key, value, commented, meaning } of entries) {
      const fallback = defaults[key];
      // Optional in the schema (a default applied where it is used) or read elsewhere: the line shows it as written.
      if (fallback === undefined) continue;
      if (commented) expect(value, key).toBe(String(fallback));
      else if (value !== String(fallback)) expect(meaning, key).toContain(`Default ${String(fallback)}.`);
    }
  });

  it('is a valid production configuration as shipped, and with every line uncommented', () => {
    const set = Object.fromEntries(entries.filter((entry) => !entry.commented).map((entry) => [entry.key, entry.value]));
    expect(() => parseProductionConfig(set)).not.toThrow();
    expect(set.SITE_URL).toMatch(/^https:\/\//);
    const all = Object.fromEntries(entries.map((entry) => [entry.key, entry.value]));
    expect(() => parseProductionConfig(all)).not.toThrow();
  });
});
