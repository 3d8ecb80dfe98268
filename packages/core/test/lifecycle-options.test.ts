/** The partition-expiration and automatic-tag options: Paimon's defaults, set values, bad values named, no unknown-option warning. */
import { describe, expect, it } from 'vitest';
import { CoreOptions, InvalidOptionError } from '../src/index.js';

const opts = (raw: Record<string, string>): CoreOptions => new CoreOptions(raw, false);

describe('lifecycle options', () => {
  it("have Paimon's defaults", () => {
    const o = opts({});
    expect([
      o.partitionExpirationTimeMs,
      o.partitionExpirationCheckIntervalMs,
      o.partitionExpirationStrategy,
      o.partitionExpirationMaxNum,
    ]).toEqual([null, 3_600_000, 'values-time', 100]);
    expect([
      o.partitionExpirationBatchSize,
      o.partitionTimestampFormatter,
      o.partitionTimestampPattern,
      o.endInputCheckPartitionExpire,
    ]).toEqual([null, null, null, false]);
    expect([o.tagAutomaticCreation, o.tagCreationPeriod, o.tagCreationDelayMs, o.tagPeriodFormatter, o.tagNumRetainedMax]).toEqual([
      'none',
      'daily',
      0,
      'with_dashes',
      null,
    ]);
    expect([
      o.tagDefaultTimeRetainedMs,
      o.tagAutomaticCompletion,
      o.tagBatchCustomizedName,
      o.sinkWatermarkTimeZone,
      o.tagPeriodMs,
    ]).toEqual([null, false, null, 'UTC', 86_400_000]);
  });

  it('read set values with Paimon syntax and are known keys', () => {
    const o = opts({
      'partition.expiration-time': '7 d',
      'partition.expiration-check-interval': '10 min',
      'partition.expiration-strategy': 'UPDATE-TIME',
      'partition.expiration-max-num': '5',
      'tag.automatic-creation': 'process-time',
      'tag.creation-period': 'two-hours',
      'tag.creation-delay': '30 min',
      'tag.period-formatter': 'without_dashes',
      'tag.num-retained-max': '24',
      'tag.default-time-retained': '3 d',
      'sink.watermark-time-zone': 'Asia/Shanghai',
    });
    expect(o.partitionExpirationTimeMs).toBe(7 * 86_400_000);
    expect(o.partitionExpirationCheckIntervalMs).toBe(600_000);
    expect(o.partitionExpirationStrategy).toBe('update-time');
    expect(o.partitionExpirationMaxNum).toBe(5);
    expect([o.tagAutomaticCreation, o.tagCreationPeriod, o.tagCreationDelayMs, o.tagPeriodFormatter]).toEqual([
      'process-time',
      'two-hours',
      1_800_000,
      'without_dashes',
    ]);
    expect([o.tagNumRetainedMax, o.tagDefaultTimeRetainedMs, o.sinkWatermarkTimeZone, o.tagPeriodMs]).toEqual([
      24,
      3 * 86_400_000,
      'Asia/Shanghai',
      7_200_000,
    ]);
    expect(o.unknownKeys()).toEqual([]);
  });

  it('name the option of a bad value', () => {
    const bad: Array<[Record<string, string>, (o: CoreOptions) => unknown, RegExp]> = [
      [{ 'partition.expiration-time': 'soon' }, (o) => o.partitionExpirationTimeMs, /partition\.expiration-time/],
      [{ 'partition.expiration-strategy': 'oldest' }, (o) => o.partitionExpirationStrategy, /partition\.expiration-strategy/],
      [{ 'partition.expiration-max-num': '0' }, (o) => o.partitionExpirationMaxNum, /partition\.expiration-max-num/],
      [{ 'tag.automatic-creation': 'daily' }, (o) => o.tagAutomaticCreation, /tag\.automatic-creation/],
      [{ 'tag.creation-period': 'weekly' }, (o) => o.tagCreationPeriod, /tag\.creation-period/],
      [
        { 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'hourly', 'tag.creation-delay': '1 h' },
        (o) => o.tagCreationDelayMs,
        /shorter than one tag period/,
      ],
      [{ 'tag.num-retained-max': '-1' }, (o) => o.tagNumRetainedMax, /tag\.num-retained-max/],
      [{ 'sink.watermark-time-zone': 'Mars/Olympus' }, (o) => o.sinkWatermarkTimeZone, /sink\.watermark-time-zone/],
    ];
    for (const [raw, get, message] of bad) {
      expect(() => get(opts(raw))).toThrow(InvalidOptionError);
      expect(() => opts(raw).validate()).toThrow(message);
    }
  });

  it('warns about a misspelled tag option instead of ignoring it silently', () => {
    expect(opts({ 'tag.automatic-creaton': 'process-time' }).unknownKeys()).toEqual([
      { key: 'tag.automatic-creaton', suggestion: 'tag.automatic-creation' },
    ]);
  });
});
