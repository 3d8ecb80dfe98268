import { describe, expect, it } from 'vitest';
import { commitOptionsFromTable } from '../src/commit/commit-options.js';
import { RetryBackoff, retryWaitMs } from '../src/commit/commit-retry.js';
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

  it('adaptive backoff: full jitter over the winning window, at most 4 windows, within the max wait', () => {
    const top = new RetryBackoff(10, 10_000, () => 0.999999);
    // Before any win, lost windows seed the unit: the first lost one took 40 ms.
    expect(top.lost(0, 40)).toBe(39);
    // A win replaces the seed: the unit is now the winning window (20 ms), doubling per retry...
    top.succeeded(20);
    expect(top.lost(0, 900)).toBe(19);
    expect(top.lost(1, 900)).toBe(39);
    // ...up to 4 windows however often it loses, and slow lost attempts do not move it.
    for (let retry = 2; retry < 12; retry++) expect(top.lost(retry, 5_000)).toBe(79);
    // Later wins move the unit as a moving average (20 → 0.8·20 + 0.2·70 = 30).
    top.succeeded(70);
    expect(top.lost(0, 5_000)).toBe(29);
    expect(new RetryBackoff(10, 300, () => 0.999999).lost(10, 1000)).toBe(299); // never above commit.max-retry-wait
    // Fast stores: never below commit.min-retry-wait as the unit, and the wait can be 0 (full jitter).
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(0, 1)).toBe(9);
    expect(new RetryBackoff(10, 10_000, () => 0).lost(3, 500)).toBe(0);
  });

  it('adaptive backoff: the waits after a loss are spread uniformly below the bound', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 16807) % 2147483647; // deterministic: Park-Miller
      return (seed - 1) / 2147483646;
    };
    const b = new RetryBackoff(10, 10_000, random);
    b.succeeded(25);
    const waits = Array.from({ length: 4000 }, (_, i) => b.lost(i % 4, 25));
    const bound = (retry: number): number => 25 * 2 ** Math.min(retry, 2);
    waits.forEach((w, i) => expect(w).toBeLessThan(bound(i % 4)));
    // At retry 3 and later the bound is 100 ms: a quarter of the draws below 25, a quarter above 75.
    const late = waits.filter((_, i) => i % 4 === 3);
    expect(late.filter((w) => w < 25).length / late.length).toBeGreaterThan(0.2);
    expect(late.filter((w) => w >= 75).length / late.length).toBeGreaterThan(0.2);
  });
});
