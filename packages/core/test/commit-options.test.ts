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

  it('adaptive backoff: full jitter scaled by the measured attempt time, exponent capped, within the max wait', () => {
    const top = new RetryBackoff(10, 10_000, () => 0.999999);
    // The first lost attempt took 40 ms: the wait spreads over one attempt's time.
    expect(top.lost(0, 40)).toBe(39);
    // The scale is a moving average of attempt times (40 → 0.8·40 + 0.2·90 = 50), doubling per retry.
    expect(top.lost(1, 90)).toBe(99);
    expect(top.lost(10, 50)).toBe(799); // 2^4 at most
    expect(new RetryBackoff(10, 300, () => 0.999999).lost(10, 1000)).toBe(299); // never above commit.max-retry-wait
    // Fast stores: never below commit.min-retry-wait as the unit, and the wait can be 0 (full jitter).
    expect(new RetryBackoff(10, 10_000, () => 0.999999).lost(0, 1)).toBe(9);
    expect(new RetryBackoff(10, 10_000, () => 0).lost(3, 500)).toBe(0);
    // Successful attempts update the scale too.
    const b = new RetryBackoff(10, 10_000, () => 0.5);
    b.succeeded(100);
    expect(b.lost(0, 100)).toBe(50);
  });
});
