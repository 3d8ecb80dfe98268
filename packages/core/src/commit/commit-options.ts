/**
 * Commit-related table options with Paimon's names and defaults.
 */
import type { AvroCodecName } from '@tidemark/format';
import { tableOptions, type CoreOptions } from '../core-options.js';
import { checkWritableFormats } from '../write/file-format.js';

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

/**
 * Commit settings of a table's options (absent options take Paimon's defaults).
 *
 * @throws NotSupportedError when the table's `file.format` is not parquet or its `manifest.format`
 *   not avro (a commit writes manifests, and most add data files).
 */
export function commitOptionsOf(o: CoreOptions): CommitOptions {
  checkWritableFormats(o);
  return {
    manifestTargetFileSize: o.manifestTargetFileSize,
    manifestMergeMinCount: o.manifestMergeMinCount,
    manifestFullCompactionThresholdSize: o.manifestFullCompactionThresholdSize,
    maxRetries: o.commitMaxRetries,
    timeoutMs: o.commitTimeoutMs ?? Number.POSITIVE_INFINITY,
    minRetryWaitMs: o.commitMinRetryWaitMs,
    maxRetryWaitMs: o.commitMaxRetryWaitMs,
    manifestCodec: o.manifestCodec,
    zstdLevel: o.zstdLevel,
    dynamicPartitionOverwrite: o.dynamicPartitionOverwrite,
  };
}

/** Commit settings from a raw options map (see {@link commitOptionsOf}). */
export function commitOptionsFromTable(options: Readonly<Record<string, string>>): CommitOptions {
  return commitOptionsOf(tableOptions({ options, primaryKeys: [] }));
}
