/** The store plan (tests/helpers/store-plan.ts) names real files, each once, so no file silently leaves a store. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOWDB_ONLY, RUN_ONCE } from '../helpers/store-plan.ts';
import { ROOT } from '../helpers/server.ts';

describe('the store plan', () => {
  it('names only test files that exist, each in one list, with a reason for every lowdb-only one', () => {
    const named = [...RUN_ONCE, ...Object.keys(LOWDB_ONLY)];
    expect(named.filter((file) => !fs.existsSync(path.join(ROOT, file)))).toEqual([]);
    expect(named.filter((file) => !/\.test\.ts$/.test(file))).toEqual([]);
    expect(new Set(named).size).toBe(named.length);
    expect(Object.entries(LOWDB_ONLY).filter(([, why]) => why.trim().length < 20)).toEqual([]);
  });
});
