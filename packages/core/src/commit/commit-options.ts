/**
 * Commit-related table options with Paimon's names and defaults.
 */
import type { AvroCodecName } from '@tidemark/format';
import { parseDuration, parseMemorySize } from '../core-options.js';
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
