import { describe, expect, it } from 'vitest';
import { commitOptionsFromTable } from '../src/commit/commit-options.js';
import { RetryBackoff, WinStreakYield, retryWaitMs } from '../src/commit/commit-retry.js';
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

  it('win-streak yield: only a writer winning in a row while others are around waits, by catch-up times since its last snapshot', () => {
    // A lone writer never waits, however fast it commits.
    const lone = new WinStreakYield();
    lone.caughtUp(20);
    for (let t = 0; t < 10; t++) lone.created(t * 5, false);
    expect(lone.waitMs(50, 10_000)).toBe(0);

    const y = new WinStreakYield();
    y.caughtUp(20); // reading another writer's snapshot took 20 ms
    y.sawOthers(); // e.g. a lost race
    y.created(1000, true); // won after meeting others: no streak yet
    expect(y.waitMs(1001, 10_000)).toBe(0);
    y.created(1030, false); // a second snapshot in a row: the others had no turn
    expect(y.waitMs(1030, 10_000)).toBe(20); // one catch-up time after its last snapshot
    expect(y.waitMs(1045, 10_000)).toBe(5); // time spent since (writing data) counts
    expect(y.waitMs(1060, 10_000)).toBe(0);
    y.created(1100, false);
    y.created(1200, false);
    expect(y.waitMs(1200, 10_000)).toBe(60); // streak of 3: three catch-up times
    for (let i = 0; i < 3; i++) y.created(1300 + i, false);
    expect(y.waitMs(1302, 10_000)).toBe(80); // at most four
    expect(y.waitMs(1302, 50)).toBe(50); // never above commit.max-retry-wait
    // Another writer's snapshot in between ends the streak.
    y.created(1400, true);
    expect(y.waitMs(1400, 10_000)).toBe(0);
    // Contention is forgotten after 8 commits without a sign of other writers.
    for (let i = 0; i < 8; i++) y.created(1500 + i, false);
    expect(y.waitMs(1507, 10_000)).toBe(0);
  });
});
