/** The process-wide registries (src/lib/process-wide.ts): two copies of the module, as a script and a bundle load, see one value. */
import { afterEach, describe, expect, it } from 'vitest';
import * as processWide from '../../src/lib/process-wide.ts';

const { getProcessWide, peekProcessWide, setProcessWide } = processWide;
// A query makes the loader evaluate the file again: a second copy, as a bundle has (a variable, so TypeScript does not resolve it).
const SECOND_COPY = '../../src/lib/process-wide.ts?second-copy';

afterEach(() => {
  setProcessWide('renderStore', undefined);
});

describe('process-wide values', () => {
  it('are shared by two copies of the module, made once', async () => {
    const copy = (await import(SECOND_COPY)) as typeof processWide;
    expect(copy.getProcessWide).not.toBe(getProcessWide);
    let made = 0;
    const first = getProcessWide('renderStore', () => ({ made: ++made }));
    const second = copy.getProcessWide('renderStore', () => ({ made: ++made }));
    expect(second).toBe(first);
    expect(made).toBe(1);
  });

  it('are replaced and removed by setProcessWide', () => {
    expect(peekProcessWide('renderStore')).toBeUndefined();
    setProcessWide('renderStore', 'a');
    expect(peekProcessWide('renderStore')).toBe('a');
    expect(getProcessWide('renderStore', () => 'b')).toBe('a');
    setProcessWide('renderStore', undefined);
    expect(peekProcessWide('renderStore')).toBeUndefined();
  });
});
