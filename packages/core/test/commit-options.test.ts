import { describe, expect, it } from 'vitest';
import { commitOptionsFromTable } from '../src/commit/commit-options.js';
import { RetryBackoff, WriterActivity, retryWaitMs } from '../src/commit/commit-retry.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';
import { InvalidOptionError } from '../src/core-options.js';

describe('commit options', () => {
  it("takes Paimon's defaults", () => {
    expect(commitOptionsFromTable({})).toEqual({
      manifestTargetFileSize: 8 * 1024 * 1024,
      manifestMergeMinCount: 30,
      manifestFullCompactionThresholdSize: 16 * 1024 * 1024,
      maxRetries: 10,
      timeoutMs: Number.POSITIVE_INFINITY,
      minRetryWaitMs: 10,
      maxRetryWaitMs: 10_000,
      manifestCodec: 'zstandard',
      zstdLevel: 1,
      dynamicPartitionOverwrite: true,
    });
  });

  it('parses memory sizes, durations and codecs with Paimon syntax', () => {
    const o = commitOptionsFromTable({
      'manifest.target-file-size': '2 mb',
      'manifest.full-compaction-threshold-size': '512kb',
      'commit.timeout': '30 s',
      'commit.min-retry-wait': '5ms',
      'commit.max-retry-wait': '1 min',
      'manifest.compression': 'snappy',
      'dynamic-partition-overwrite': 'false',
    });
    expect(o).toMatchObject({
      manifestTargetFileSize: 2 * 1024 * 1024,
      manifestFullCompactionThresholdSize: 512 * 1024,
      timeoutMs: 30_000,
      minRetryWaitMs: 5,
      maxRetryWaitMs: 60_000,
      manifestCodec: 'snappy',
      dynamicPartitionOverwrite: false,
    });
    expect(() => commitOptionsFromTable({ 'commit.max-retries': 'many' })).toThrow(/'commit.max-retries' = 'many'/);
    expect(() => commitOptionsFromTable({ 'manifest.target-file-size': '8 parsecs' })).toThrow(InvalidOptionError);
    expect(() => commitOptionsFromTable({ 'manifest.target-file-size': '8 parsecs' })).toThrow(
      /'manifest.target-file-size' has invalid value '8 parsecs'/,
    );
    expect(() => commitOptionsFromTable({ 'commit.timeout': 'soon' })).toThrow(/'commit.timeout' has invalid value 'soon'/);
  });

  it('backs off exponentially up to the max wait with at most 20% jitter', () => {
    expect(retryWaitMs(0, 10, 10_000, () => 0)).toBe(10);
    expect(retryWaitMs(3, 10, 10_000, () => 0)).toBe(80);
    expect(retryWaitMs(20, 10, 10_000, () => 0)).toBe(10_000);
    expect(retryWaitMs(20, 10, 10_000, () => 0.999)).toBeLessThanOrEqual(12_000);
    expect(retryWaitMs(2, 10, 10_000, () => 0.5)).toBe(44);
  });

  it('adaptive backoff: full jitter over one or two attempts, shrinking with each lost race, within the max wait', () => {
    const top = new RetryBackoff(10, 10_000, () => 0.999999);
    // The first lost attempt took 40 ms and several other writers committed recently: two attempts' time.
    expect(top.lost(0, 40, 3)).toBe(79);
    // The unit is a moving average of attempt times (40 → 0.8·40 + 0.2·90 = 50); a second loss halves the range.
    expect(top.lost(1, 90, 3)).toBe(49);
    // A writer that keeps losing goes first: 2 / (1 + 3) attempts, never under half an attempt.
    expect(top.lost(3, 50, 3)).toBe(24);
    expect(top.lost(9, 50, 7)).toBe(24);
    // One other writer (or an unknown count): one attempt's time, then half.
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(0, 40)).toBe(39);
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(0, 40, 0)).toBe(39);
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(1, 40, 1)).toBe(19);
    // Seven contenders spread over two attempts too: longer leaves the table idle.
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(0, 40, 7)).toBe(79);
    expect(new RetryBackoff(10, 300, () => 0.999999).lost(0, 1000, 7)).toBe(299); // never above commit.max-retry-wait
    // Fast stores: never below commit.min-retry-wait as the unit, and the wait can be 0 (full jitter).
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(0, 1)).toBe(9);
    expect(new RetryBackoff(10, 10_000, () => 0).lost(3, 500, 4)).toBe(0);
    // Successful attempts update the unit too.
    const b = new RetryBackoff(10, 10_000, () => 0.5);
    b.succeeded(100);
    expect(b.lost(0, 100)).toBe(50);
  });

  it('adaptive backoff, seeded: waits stay in range and shrink for the writers that lost most', () => {
    const draws = (retry: number, contenders: number): number[] => {
      const b = new RetryBackoff(10, 10_000, seededRandom(42 + retry * 8 + contenders));
      return Array.from({ length: 2000 }, () => b.lost(retry, 60, contenders));
    };
    const mean = (xs: number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
    for (const c of [1, 3, 7]) {
      let previous = Number.POSITIVE_INFINITY;
      for (const r of [0, 1, 2, 4, 8]) {
        const xs = draws(r, c);
        const cap = 60 * Math.max(0.5, Math.min(2, c) / (1 + r));
        expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
        expect(Math.max(...xs)).toBeLessThan(cap);
        // Full jitter: uniform over the range, so the mean sits near half of it (2000 draws: within 5 %).
        expect(Math.abs(mean(xs) - cap / 2)).toBeLessThan(cap * 0.05);
        // More lost races never mean a longer expected wait (the floor makes later ones equal).
        expect(mean(xs)).toBeLessThanOrEqual(previous * 1.05);
        previous = mean(xs);
      }
    }
    // Losers of a race among several writers spread over twice the time of two writers' losers.
    expect(mean(draws(0, 3)) / mean(draws(0, 1))).toBeGreaterThan(1.8);
    // However long a writer has lost, its next wait is under two attempts' time (the old exponential rule: up to 16).
    expect(Math.max(...draws(9, 7))).toBeLessThan(60);
  });

  it('writer activity: counts the other commit users among the newest snapshots seen', () => {
    const a = new WriterActivity(4);
    expect(a.others('me')).toBe(0);
    a.saw(1, 'me');
    a.saw(2, 'me');
    expect(a.others('me')).toBe(0);
    a.saw(3, 'x');
    a.saw(5, 'y');
    a.saw(4, 'x'); // seen out of order
    expect(a.others('me')).toBe(2);
    expect(a.others('x')).toBe(2); // 'me' and 'y'
    // Snapshots 6..9 by 'me' push x and y out of the window of 4.
    for (let id = 6; id <= 9; id++) a.saw(id, 'me');
    expect(a.others('me')).toBe(0);
    // An id older than the window changes nothing.
    a.saw(3, 'z');
    expect(a.others('me')).toBe(0);
    a.saw(10, 'z');
    expect(a.others('me')).toBe(1);
  });
});
