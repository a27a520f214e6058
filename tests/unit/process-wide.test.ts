/** The process-wide registries (src/lib/process-wide.ts): two copies of the module, as a script and a bundle load, see one value. */
import { afterEach, describe, expect, it } from 'vitest';
import * as processWide from '../../src/lib/process-wide.ts';
import { PROCESS_WIDE } from '../../src/lib/process-wide.ts';

const { getProcessWide } = processWide;
// A query makes the loader evaluate the file again: a second copy, as a bundle has (a variable, so TypeScript does not resolve it).
const SECOND_COPY = '../../src/lib/process-wide.ts?second-copy';

afterEach(() => {
  delete (globalThis as unknown as Record<symbol, unknown>)[Symbol.for(PROCESS_WIDE.devRuntime)];
});

describe('process-wide values', () => {
  it('are shared by two copies of the module, made once', async () => {
    const copy = (await import(SECOND_COPY)) as typeof processWide;
    expect(copy.getProcessWide).not.toBe(getProcessWide);
    let made = 0;
    const first = getProcessWide('devRuntime', () => ({ made: ++made }));
    const second = copy.getProcessWide('devRuntime', () => ({ made: ++made }));
    expect(second).toBe(first);
    expect(made).toBe(1);
  });
});
