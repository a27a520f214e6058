/** The Publishing panel's short relative times and durations. */
import { describe, expect, it } from 'vitest';
import { formatDuration, formatElapsed } from '../../src/islands/admin/publishing-format.ts';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe('formatElapsed', () => {
  it('counts seconds, minutes, hours and days back', () => {
    expect(formatElapsed(ago(200), NOW)).toBe('just now');
    expect(formatElapsed(ago(12_000), NOW)).toBe('12 s ago');
    expect(formatElapsed(ago(5 * 60_000 + 30_000), NOW)).toBe('5 min ago');
    expect(formatElapsed(ago(3 * 3_600_000 + 1), NOW)).toBe('3 h ago');
    expect(formatElapsed(ago(2 * 86_400_000), NOW)).toBe('2 d ago');
  });
  it('says how soon a time ahead comes', () => {
    expect(formatElapsed(ago(-4_000), NOW)).toBe('in 4 s');
    expect(formatElapsed(ago(-200), NOW)).toBe('now');
  });
  it('answers nothing for a date it cannot read', () => {
    expect(formatElapsed('not a date', NOW)).toBe('');
  });
});

describe('formatDuration', () => {
  it('uses ms under a second, else seconds', () => {
    expect(formatDuration(12.4)).toBe('12 ms');
    expect(formatDuration(1430)).toBe('1.4 s');
  });
});
