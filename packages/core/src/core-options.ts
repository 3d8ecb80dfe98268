/**
 * Table options with Paimon's names and defaults (Java `CoreOptions`).
 *
 * Paimon writes only the user-given options into `schema-0`; defaults are applied when the
 * options are read, which is what {@link tableOptions} does. Values stay strings in the schema and
 * are parsed here with Paimon's syntax (`256 mb`, `1 h`, `10 ms`).
 */
import type { TableSchema } from '@tidemark/format';
import { TidemarkUserError } from './errors.js';

/** An option value that does not parse (bad size, duration, number or enum). */
export class InvalidOptionError extends TidemarkUserError {
  constructor(
    readonly option: string,
    readonly value: string,
    expected: string,
  ) {
    super(`table option '${option}' has invalid value '${value}': expected ${expected}`);
  }
}

/** Option names used by tidemark (Paimon spelling). */
export const OPTION = {
  BUCKET: 'bucket',
  BUCKET_KEY: 'bucket-key',
  FILE_FORMAT: 'file.format',
  FILE_COMPRESSION: 'file.compression',
  TARGET_FILE_SIZE: 'target-file-size',
  WRITE_BUFFER_SIZE: 'write-buffer-size',
  MANIFEST_TARGET_FILE_SIZE: 'manifest.target-file-size',
  MANIFEST_MERGE_MIN_COUNT: 'manifest.merge-min-count',
  MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE: 'manifest.full-compaction-threshold-size',
  METADATA_STATS_MODE: 'metadata.stats-mode',
  METADATA_STATS_DENSE_STORE: 'metadata.stats-dense-store',
  SNAPSHOT_NUM_RETAINED_MIN: 'snapshot.num-retained.min',
  SNAPSHOT_NUM_RETAINED_MAX: 'snapshot.num-retained.max',
  SNAPSHOT_TIME_RETAINED: 'snapshot.time-retained',
  SNAPSHOT_EXPIRE_LIMIT: 'snapshot.expire.limit',
  COMMIT_MAX_RETRIES: 'commit.max-retries',
  COMMIT_TIMEOUT: 'commit.timeout',
  COMMIT_MIN_RETRY_WAIT: 'commit.min-retry-wait',
  COMMIT_MAX_RETRY_WAIT: 'commit.max-retry-wait',
  DYNAMIC_PARTITION_OVERWRITE: 'dynamic-partition-overwrite',
  PARTITION_DEFAULT_NAME: 'partition.default-name',
  PARTITION_LEGACY_NAME: 'partition.legacy-name',
  COMPACTION_MIN_FILE_NUM: 'compaction.min.file-num',
  DATA_FILE_PREFIX: 'data-file.prefix',
  DYNAMIC_BUCKET_TARGET_ROW_NUM: 'dynamic-bucket.target-row-num',
  DYNAMIC_BUCKET_INITIAL_BUCKETS: 'dynamic-bucket.initial-buckets',
  DYNAMIC_BUCKET_MAX_BUCKETS: 'dynamic-bucket.max-buckets',
} as const;

const KIB = 1024;
const MIB = 1024 * KIB;
/** Java Integer.MAX_VALUE, the default of `snapshot.num-retained.max`. */
export const INTEGER_MAX_VALUE = 2147483647;

/** Per-column statistics mode (`metadata.stats-mode`, `fields.<col>.stats-mode`). */
export type StatsMode = { readonly kind: 'none' } | { readonly kind: 'counts' } | { readonly kind: 'full' } | { readonly kind: 'truncate'; readonly length: number };

/** Typed, defaulted view of a table's options. */
export interface CoreOptions {
  /** `bucket`: -1 (bucket-unaware append / dynamic PK), -2 (postpone) or a positive count. */
  readonly bucket: number;
  /** `bucket-key` columns (empty when unset). */
  readonly bucketKey: readonly string[];
  readonly fileFormat: string;
  readonly fileCompression: string;
  /** `target-file-size` in bytes: 256 MiB for append tables, 128 MiB for primary-key tables. */
  readonly targetFileSize: number;
  /** `write-buffer-size` in bytes (256 MiB): the writer's memory budget for buffered rows. */
  readonly writeBufferSize: number;
  readonly manifestTargetFileSize: number;
  readonly manifestMergeMinCount: number;
  readonly manifestFullCompactionThresholdSize: number;
  /** `metadata.stats-mode` (default truncate(16)). */
  readonly statsMode: StatsMode;
  /** `metadata.stats-dense-store` (default true). */
  readonly statsDenseStore: boolean;
  readonly snapshotNumRetainedMin: number;
  readonly snapshotNumRetainedMax: number;
  /** `snapshot.time-retained` in milliseconds (1 h). */
  readonly snapshotTimeRetainedMs: number;
  readonly snapshotExpireLimit: number;
  readonly commitMaxRetries: number;
  /** `commit.timeout` in milliseconds; null = no timeout. */
  readonly commitTimeoutMs: number | null;
  readonly commitMinRetryWaitMs: number;
  readonly commitMaxRetryWaitMs: number;
  readonly dynamicPartitionOverwrite: boolean;
  readonly partitionDefaultName: string;
  readonly partitionLegacyName: boolean;
  readonly compactionMinFileNum: number;
  readonly dataFilePrefix: string;
  /** `dynamic-bucket.target-row-num` (2,000,000): keys per bucket before a dynamic-bucket table opens another bucket. */
  readonly dynamicBucketTargetRowNum: number;
  /** `dynamic-bucket.initial-buckets` (unset = 1 here): buckets new keys of a partition are spread over from the start. */
  readonly dynamicBucketInitialBuckets: number | null;
  /** `dynamic-bucket.max-buckets` (-1 = unlimited): upper bound of buckets per partition. */
  readonly dynamicBucketMaxBuckets: number;
  /** Stats mode of one column: `fields.<col>.stats-mode`, else {@link statsMode}. */
  statsModeOf(column: string): StatsMode;
  /** The raw option value, or undefined. */
  get(name: string): string | undefined;
}

/** Defaulted options of a schema (or of a raw options map with the table kind given). */
export function tableOptions(schema: Pick<TableSchema, 'options' | 'primaryKeys'>): CoreOptions {
  const o = schema.options;
  const isPk = schema.primaryKeys.length > 0;
  const raw = (k: string): string | undefined => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);
  const str = (k: string, d: string): string => raw(k) ?? d;
  const int = (k: string, d: number): number => {
    const v = raw(k);
    if (v === undefined) return d;
    const n = Number(v.trim());
    if (!Number.isInteger(n)) throw new InvalidOptionError(k, v, 'an integer');
    return n;
  };
  const bool = (k: string, d: boolean): boolean => {
    const v = raw(k);
    if (v === undefined) return d;
    const t = v.trim().toLowerCase();
    if (t === 'true') return true;
    if (t === 'false') return false;
    throw new InvalidOptionError(k, v, "'true' or 'false'");
  };
  const size = (k: string, d: number): number => {
    const v = raw(k);
    return v === undefined ? d : parseMemorySize(v, k);
  };
  const dur = (k: string, d: number): number => {
    const v = raw(k);
    return v === undefined ? d : parseDuration(v, k);
  };
  const positive = (k: string, d: number): number => {
    const n = int(k, d);
    if (n <= 0) throw new InvalidOptionError(k, String(raw(k)), 'a positive integer');
    return n;
  };
  const maxBuckets = (): number => {
    const n = int(OPTION.DYNAMIC_BUCKET_MAX_BUCKETS, -1);
    if (n !== -1 && n <= 0) throw new InvalidOptionError(OPTION.DYNAMIC_BUCKET_MAX_BUCKETS, String(raw(OPTION.DYNAMIC_BUCKET_MAX_BUCKETS)), '-1 or a positive integer');
    return n;
  };
  const bucket = int(OPTION.BUCKET, -1);
  if (bucket === 0 || bucket < -2) throw new InvalidOptionError(OPTION.BUCKET, String(raw(OPTION.BUCKET)), 'a positive count, -1 or -2');
  const bucketKeyRaw = raw(OPTION.BUCKET_KEY);
  const statsMode = parseStatsMode(str(OPTION.METADATA_STATS_MODE, 'truncate(16)'), OPTION.METADATA_STATS_MODE);
  const timeout = raw(OPTION.COMMIT_TIMEOUT);
  return {
    bucket,
    bucketKey: bucketKeyRaw === undefined || bucketKeyRaw.trim() === '' ? [] : bucketKeyRaw.split(',').map((s) => s.trim()),
    fileFormat: str(OPTION.FILE_FORMAT, 'parquet').toLowerCase(),
    fileCompression: str(OPTION.FILE_COMPRESSION, 'zstd').toLowerCase(),
    targetFileSize: size(OPTION.TARGET_FILE_SIZE, isPk ? 128 * MIB : 256 * MIB),
    writeBufferSize: size(OPTION.WRITE_BUFFER_SIZE, 256 * MIB),
    manifestTargetFileSize: size(OPTION.MANIFEST_TARGET_FILE_SIZE, 8 * MIB),
    manifestMergeMinCount: int(OPTION.MANIFEST_MERGE_MIN_COUNT, 30),
    manifestFullCompactionThresholdSize: size(OPTION.MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE, 16 * MIB),
    statsMode,
    statsDenseStore: bool(OPTION.METADATA_STATS_DENSE_STORE, true),
    snapshotNumRetainedMin: int(OPTION.SNAPSHOT_NUM_RETAINED_MIN, 10),
    snapshotNumRetainedMax: int(OPTION.SNAPSHOT_NUM_RETAINED_MAX, INTEGER_MAX_VALUE),
    snapshotTimeRetainedMs: dur(OPTION.SNAPSHOT_TIME_RETAINED, 3_600_000),
    snapshotExpireLimit: int(OPTION.SNAPSHOT_EXPIRE_LIMIT, 50),
    commitMaxRetries: int(OPTION.COMMIT_MAX_RETRIES, 10),
    commitTimeoutMs: timeout === undefined ? null : parseDuration(timeout, OPTION.COMMIT_TIMEOUT),
    commitMinRetryWaitMs: dur(OPTION.COMMIT_MIN_RETRY_WAIT, 10),
    commitMaxRetryWaitMs: dur(OPTION.COMMIT_MAX_RETRY_WAIT, 10_000),
    dynamicPartitionOverwrite: bool(OPTION.DYNAMIC_PARTITION_OVERWRITE, true),
    partitionDefaultName: str(OPTION.PARTITION_DEFAULT_NAME, '__DEFAULT_PARTITION__'),
    partitionLegacyName: bool(OPTION.PARTITION_LEGACY_NAME, true),
    compactionMinFileNum: int(OPTION.COMPACTION_MIN_FILE_NUM, 5),
    dataFilePrefix: str(OPTION.DATA_FILE_PREFIX, 'data-'),
    dynamicBucketTargetRowNum: positive(OPTION.DYNAMIC_BUCKET_TARGET_ROW_NUM, 2_000_000),
    dynamicBucketInitialBuckets: raw(OPTION.DYNAMIC_BUCKET_INITIAL_BUCKETS) === undefined ? null : positive(OPTION.DYNAMIC_BUCKET_INITIAL_BUCKETS, 1),
    dynamicBucketMaxBuckets: maxBuckets(),
    statsModeOf(column: string): StatsMode {
      const key = `fields.${column}.stats-mode`;
      const v = raw(key);
      return v === undefined ? statsMode : parseStatsMode(v, key);
    },
    get: raw,
  };
}

/** Parses `none`, `counts`, `full` or `truncate(<n>)` (case-insensitive). */
export function parseStatsMode(value: string, option = OPTION.METADATA_STATS_MODE as string): StatsMode {
  const v = value.trim().toLowerCase();
  if (v === 'none' || v === 'counts' || v === 'full') return { kind: v };
  const m = /^truncate\((\d+)\)$/.exec(v);
  if (m) return { kind: 'truncate', length: Number(m[1]) };
  throw new InvalidOptionError(option, value, "'none', 'counts', 'full' or 'truncate(<n>)'");
}

const SIZE_UNITS: Record<string, number> = {
  '': 1, b: 1, bytes: 1,
  k: KIB, kb: KIB, kibibytes: KIB,
  m: MIB, mb: MIB, mebibytes: MIB,
  g: 1024 * MIB, gb: 1024 * MIB, gibibytes: 1024 * MIB,
  t: 1024 * 1024 * MIB, tb: 1024 * 1024 * MIB, tebibytes: 1024 * 1024 * MIB,
};

/** Paimon `MemorySize.parse`: `<number> [b|kb|mb|gb|tb]` (binary units, case-insensitive). */
export function parseMemorySize(value: string, option = 'memory size'): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidOptionError(option, value, "a size such as '128 mb', '8 kb' or '1024'");
  return Number(m[1]) * unit;
}

const DURATION_UNITS: Record<string, number> = {
  '': 1, ms: 1, milli: 1, millis: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  min: 60_000, m: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};

/** Paimon `TimeUtils.parseDuration` in milliseconds: `10 ms`, `10 s`, `1 h`, `30 min`, `2 d` (bare number = ms). */
export function parseDuration(value: string, option = 'duration'): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = m ? DURATION_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidOptionError(option, value, "a duration such as '10 ms', '10 s' or '1 h'");
  return Number(m[1]) * unit;
}
