import { describe, expect, it } from 'vitest';
import { commitOptionsFromTable } from '../src/commit/commit-options.js';
import { retryWaitMs } from '../src/commit/commit-retry.js';
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
});
