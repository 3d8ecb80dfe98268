/**
 * Commit-related table options with Paimon's names and defaults.
 */
import type { AvroCodecName } from '@tidemark/format';
import { CommitInputError } from './commit-errors.js';

/** Resolved commit settings. */
export interface CommitOptions {
  /** `manifest.target-file-size` (default 8 MiB): manifests roll, and minor compaction groups, at this size. */
  readonly manifestTargetFileSize: number;
  /** `manifest.merge-min-count` (default 30): a trailing group of small manifests is merged from this count on. */
  readonly manifestMergeMinCount: number;
  /** `manifest.full-compaction-threshold-size` (default 16 MiB). */
  readonly manifestFullCompactionThresholdSize: number;
  /** `commit.max-retries` (default 10). */
  readonly maxRetries: number;
  /** `commit.timeout` in ms (default unbounded). */
  readonly timeoutMs: number;
  /** `commit.min-retry-wait` (default 10 ms). */
  readonly minRetryWaitMs: number;
  /** `commit.max-retry-wait` (default 10 s). */
  readonly maxRetryWaitMs: number;
  /** Avro codec from `manifest.compression` (default zstd → `zstandard`). */
  readonly manifestCodec: AvroCodecName;
  /** `file.compression.zstd-level` (default 1), also used for manifests. */
  readonly zstdLevel: number;
  /** `dynamic-partition-overwrite` (default true). */
  readonly dynamicPartitionOverwrite: boolean;
}

const KIB = 1024;
const SIZE_UNITS: Record<string, number> = {
  '': 1, b: 1, bytes: 1,
  k: KIB, kb: KIB, kibibytes: KIB,
  m: KIB ** 2, mb: KIB ** 2, mebibytes: KIB ** 2,
  g: KIB ** 3, gb: KIB ** 3, gibibytes: KIB ** 3,
  t: KIB ** 4, tb: KIB ** 4, tebibytes: KIB ** 4,
};

const DURATION_UNITS: Record<string, number> = {
  '': 1, ms: 1, milli: 1, millis: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  min: 60_000, m: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};

/** Parses a Paimon MemorySize (`8 mb`, `16MB`, `1024`); bare numbers are bytes. */
function parseMemorySize(text: string, option: string): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new CommitInputError(`option '${option}' = '${text}' is not a memory size such as '8 mb'`);
  return Number(m[1]) * unit;
}

/** Parses a Paimon Duration (`10 s`, `100ms`, `1 min`); bare numbers are milliseconds. */
function parseDuration(text: string, option: string): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? DURATION_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new CommitInputError(`option '${option}' = '${text}' is not a duration such as '10 s'`);
  return Number(m[1]) * unit;
}

function parseCount(text: string, option: string): number {
  const n = Number(text.trim());
  if (!Number.isInteger(n) || n < 0) throw new CommitInputError(`option '${option}' = '${text}' is not a non-negative integer`);
  return n;
}

function codecFor(compression: string): AvroCodecName {
  switch (compression.trim().toLowerCase()) {
    case 'zstd':
    case 'zstandard':
      return 'zstandard';
    case 'none':
    case 'null':
    case 'uncompressed':
      return 'null';
    case 'deflate':
      return 'deflate';
    case 'snappy':
      return 'snappy';
    default:
      throw new CommitInputError(
        `option 'manifest.compression' = '${compression}' is not supported; use zstd, snappy, deflate or none`,
      );
  }
}

/** Commit settings from table options (absent options take Paimon's defaults). */
export function commitOptionsFromTable(options: Readonly<Record<string, string>>): CommitOptions {
  const get = (k: string): string | undefined => (Object.prototype.hasOwnProperty.call(options, k) ? options[k] : undefined);
  const size = (k: string, d: number): number => {
    const v = get(k);
    return v === undefined ? d : parseMemorySize(v, k);
  };
  const duration = (k: string, d: number): number => {
    const v = get(k);
    return v === undefined ? d : parseDuration(v, k);
  };
  const count = (k: string, d: number): number => {
    const v = get(k);
    return v === undefined ? d : parseCount(v, k);
  };
  const dyn = get('dynamic-partition-overwrite');
  return {
    manifestTargetFileSize: size('manifest.target-file-size', 8 * KIB ** 2),
    manifestMergeMinCount: count('manifest.merge-min-count', 30),
    manifestFullCompactionThresholdSize: size('manifest.full-compaction-threshold-size', 16 * KIB ** 2),
    maxRetries: count('commit.max-retries', 10),
    timeoutMs: duration('commit.timeout', Number.POSITIVE_INFINITY),
    minRetryWaitMs: duration('commit.min-retry-wait', 10),
    maxRetryWaitMs: duration('commit.max-retry-wait', 10_000),
    manifestCodec: codecFor(get('avro.codec') ?? get('manifest.compression') ?? 'zstd'),
    zstdLevel: count('file.compression.zstd-level', 1),
    dynamicPartitionOverwrite: dyn === undefined ? true : dyn.trim().toLowerCase() === 'true',
  };
}
