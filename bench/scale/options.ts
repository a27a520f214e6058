/** bench:scale's command line: the sizes, load, burst and mode switches. */
import type { BurstJob } from '../burst-writers.ts';

export type Options = {
  sizes: number[];
  votes: number;
  durationS: number;
  readerRate: number;
  keep: boolean;
  storeOnly: boolean;
  /** --bursts-only DIR: the work folder a run with --keep left (its data-N, and .out/scale-N). */
  burstsOnly: string | undefined;
  bursts: number;
  /** --write-rate SAVES,VOTES: the burst's saves and votes a second; absent: back to back, as fast as the server answers. */
  writeRate: BurstJob['rate'];
};

export function parseOptions(argv: string[]): Options {
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = (value('--sizes') ?? '1000,10000,100000').split(',').map((s) => Number(s.trim()));
  if (!sizes.length || sizes.some((n) => !Number.isInteger(n) || n < 100 || n > 200_000))
    throw new Error('--sizes takes article counts from 100 to 200000, comma-separated');
  const votes = Number(value('--votes') ?? 1_000_000);
  const durationS = Number(value('--duration') ?? 10);
  // A busy site's origin: 7 million page views an hour, without a CDN in front.
  const readerRate = Number(value('--reader-rate') ?? 2000);
  if (!Number.isInteger(readerRate) || readerRate < 10 || readerRate > 20_000)
    throw new Error('--reader-rate must be 10-20000 requests a second');
  if (!Number.isInteger(votes) || votes < 0) throw new Error('--votes must be a whole number');
  if (!(durationS >= 2 && durationS <= 60)) throw new Error('--duration must be 2-60 seconds');
  const bursts = Number(value('--bursts') ?? 3);
  if (!Number.isInteger(bursts) || bursts < 1 || bursts > 50) throw new Error('--bursts must be 1-50');
  const rate = value('--write-rate')?.split(',').map(Number);
  if (rate && (rate.length !== 2 || rate.some((n) => !Number.isInteger(n) || n < 1 || n > 10_000)))
    throw new Error('--write-rate takes saves and votes a second, 1-10000 each: --write-rate 20,200');
  return {
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    votes,
    durationS,
    readerRate,
    keep: argv.includes('--keep'),
    storeOnly: argv.includes('--store-only'),
    burstsOnly: value('--bursts-only'),
    bursts,
    writeRate: rate ? { savesPerS: rate[0]!, votesPerS: rate[1]! } : undefined,
  };
}
