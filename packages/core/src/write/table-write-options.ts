/**
 * What `TableWrite` accepts and how it is configured: the input forms, the writer options,
 * and what a compaction hook learns about the bucket it serves. Kept apart from the writer classes
 * so that the append and key-value writers and the table writer share them without importing
 * each other.
 */
import type * as arrow from 'apache-arrow';
import type { SimpleStats } from '@tidemark/format';
import type { CompactionReport } from '../compact/compact-manager.js';
import type { MergeEngineOptions } from '../read/merge-engine.js';
import type { TableContext } from '../table-context.js';
import type { BucketAssigner } from './key-value/bucket-assigner.js';
import type { CompactManager } from './key-value/merge-tree-writer.js';

/** A plain row: column name → JS value (see value-conversion.ts for the accepted forms). */
export type RowObject = Readonly<Record<string, unknown>>;

/** What `TableWrite.write` accepts. */
export type WriteInput = arrow.Table | arrow.RecordBatch | readonly RowObject[];

/** Options of `TableWrite` (and `Table.newBatchWrite`). */
export interface TableWriteOptions {
  /**
   * First sequence number of a (partition, bucket) — the max `_MAX_SEQUENCE_NUMBER` of its live
   * files + 1. Called once per bucket before its first file; defaults to 0 (append tables only need
   * increasing numbers within a commit).
   */
  readonly startSequence?: (partition: Uint8Array, bucket: number) => bigint | Promise<bigint>;
  /** Memory budget for buffered rows in bytes (default: option `write-buffer-size`). */
  readonly memoryBudget?: number;
  /** Clock for `_CREATION_TIME` (epoch millis); default `Date.now`. */
  readonly now?: () => number;
  /**
   * Record the writer's file-name prefix in `inflight/` before its first data file, so that orphan
   * cleanup running meanwhile cannot delete files not yet committed (default true). Disable only
   * where no cleanup can run concurrently (tests, benchmarks measuring raw write speed).
   */
  readonly recordInflight?: boolean;
  /** Receives best-effort failures (clearing the in-flight record); default `console.warn`. */
  readonly logger?: { warn(message: string): void };
  /**
   * Primary-key tables: the input field (row-object property or Arrow Utf8 column) holding each
   * row's kind, `+I`, `-U`, `+U` or `-D`; it is not a table column. Rows without it (or without
   * this option) are `+I` upserts.
   */
  readonly rowKindField?: string;
  /**
   * Primary-key tables with dynamic buckets (`bucket` = -1): chooses the bucket of each key
   * (default: a {@link DynamicBucketAssigner} on the latest snapshot's hash index). Fixed buckets
   * (`bucket` = N) hash the bucket key without it.
   */
  readonly bucketAssigner?: BucketAssigner;
  /**
   * The rows replace the partitions they land in (an overwrite): dynamic buckets are then assigned
   * from an empty hash index instead of the latest snapshot's.
   */
  readonly replacePartitions?: boolean;
  /** Primary-key tables: the compaction hook of each (partition, bucket) writer (default: none). */
  readonly compactManager?: (bucket: CompactManagerContext) => CompactManager;
  /**
   * Primary-key tables: told of each compaction the writer's buckets finished (their duration,
   * for metrics; `Table.newBatchWrite`'s default compaction). Must not throw.
   */
  readonly onCompaction?: (report: BucketCompactionReport) => void;
  /**
   * Append tables: maximum rows per Parquet row group (default 1,048,576). A data file is also cut
   * into one row group per pool worker while groups keep 131,072 rows or more; the row groups of a
   * file are encoded on the workers in parallel, and readers skip and decode them separately.
   */
  readonly rowGroupRows?: number;
  /**
   * Append tables: encode each data file's row groups while its rows still arrive, this many rows
   * per group. A full group goes to the worker pool at once, so the encoding overlaps whatever
   * produces the rows (a compaction decoding its inputs, say) instead of waiting until the file is
   * cut. Files still end at about `target-file-size`. Rows waiting for their group (fewer than this
   * many per partition and bucket) are held outside the memory budget, so it suits writers of a few
   * buckets. Default: off (a file's rows are buffered until it is cut, then its groups are encoded).
   */
  readonly streamRowGroupRows?: number;
  /**
   * Validate and route rows without buffering or writing anything: no data file, no in-flight
   * record, no worker. `TableWrite.routedRows` then tells how many rows went to each
   * partition, and `prepareCommit()` returns no message. For planning an overwrite
   * (`TableCommit.planOverwrite`).
   */
  readonly dryRun?: boolean;
}

/** A compaction of one (partition, bucket) that a writer finished; see {@link TableWriteOptions.onCompaction}. */
export interface BucketCompactionReport extends CompactionReport {
  readonly partition: Uint8Array;
  readonly bucket: number;
}

/** What a {@link TableWriteOptions.compactManager} factory learns about the bucket it serves. */
export interface CompactManagerContext {
  /** The table (storage, schema the writer writes with, options, paths). */
  readonly table: TableContext;
  /** The table's merge engine settings. */
  readonly merge: MergeEngineOptions;
  readonly partition: Uint8Array;
  readonly bucket: number;
  /** Full path of a data file of the bucket from its name. */
  readonly pathOf: (fileName: string) => string;
  /** A fresh data file name of the writer (same in-flight prefix as its other files). */
  readonly newFileName: () => string;
  /** Awaited before each data file is written (keeps the in-flight record current). */
  readonly beforeFile: () => Promise<void>;
  /**
   * Writes an index file of the writer (`index-<writer uuid>-<n>`, covered by its in-flight
   * record) under `index/`; returns its name. Deletion-vector tables write their vectors with it.
   */
  readonly writeIndexFile: (bytes: Uint8Array) => Promise<string>;
  /** A fresh changelog file name of the writer (compaction changelog of `lookup` / `full-compaction`). */
  readonly newChangelogFileName: () => string;
}

/** A data file whose row groups `TableWrite.writeRowGroupsOf` copies: its bytes and manifest fields. */
export interface RowGroupSource {
  readonly bytes: Uint8Array;
  readonly rowCount: number;
  readonly valueStats: SimpleStats;
  readonly valueStatsCols: readonly string[] | null;
}
