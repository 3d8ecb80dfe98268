/**
 * The shape of a table report ({@link inspectTable}): plain JSON (numbers, strings, arrays, plain
 * objects; no bigint, no Map), so `JSON.stringify` prints it as is and renderers (terminal, HTML)
 * need nothing but the object.
 */
import type { FileSizeBin } from './file-size-bins.js';

/** Version of the report's shape; raised when a field changes meaning or disappears. */
export const TABLE_REPORT_VERSION = 1;

/** One snapshot on the timeline. Rows and files are those of the snapshot's delta manifests. */
export interface TimelineSnapshot {
  readonly id: number;
  /** Commit time, epoch millis. */
  readonly timeMillis: number;
  /** APPEND, COMPACT, OVERWRITE or ANALYZE. */
  readonly kind: string;
  /** Rows of the data files this commit added. */
  readonly rowsAdded: number;
  /** Rows of the data files this commit removed (compaction inputs, overwritten files). */
  readonly rowsRemoved: number;
  readonly filesAdded: number;
  readonly filesRemoved: number;
  readonly bytesAdded: number;
  readonly bytesRemoved: number;
  /** The snapshot's `totalRecordCount`, when it has one. */
  readonly totalRecordCount: number | null;
}

/** Commits over time. */
export interface SnapshotTimeline {
  /** Retained snapshots (earliest … latest). */
  readonly retained: number;
  readonly earliestSnapshotId: number | null;
  readonly latestSnapshotId: number | null;
  /** The newest snapshots, oldest first (at most `timelineLimit`). */
  readonly snapshots: readonly TimelineSnapshot[];
  /** Older retained snapshots left off the timeline by `timelineLimit`. */
  readonly omitted: number;
  /** Commits on the timeline by kind. */
  readonly byKind: Readonly<Record<string, number>>;
}

/** Size of the live data files of one bucket. */
export interface BucketSize {
  readonly bucket: number;
  readonly files: number;
  readonly bytes: number;
  readonly rows: number;
}

/** The live data files of one partition. */
export interface PartitionReport {
  /** Partition values as in directory names (`{ dt: '2024-05-01' }`; `{}` for an unpartitioned table). */
  readonly partition: Readonly<Record<string, string>>;
  /** Relative directory, `dt=2024-05-01/` (`''` unpartitioned). */
  readonly path: string;
  readonly files: number;
  readonly bytes: number;
  readonly rows: number;
  /** Buckets holding files. */
  readonly buckets: number;
  /** Files below `target-file-size × compaction.small-file-ratio`. */
  readonly smallFiles: number;
  /** Files per size bin ({@link FileSizeReport.bins}). */
  readonly histogram: readonly number[];
}

/** Buckets of one partition, for skew. */
export interface BucketSkew {
  readonly partition: Readonly<Record<string, string>>;
  readonly path: string;
  /** Buckets the bytes are spread over: the fixed bucket count, else the buckets holding files. */
  readonly buckets: number;
  /** Largest bucket's bytes divided by the mean bytes per bucket (1 = even). */
  readonly ratio: number;
  readonly meanBytes: number;
  readonly largest: BucketSize;
  /** Every bucket by number: with a fixed bucket count all of them (empty ones as zeros), else those holding files. */
  readonly sizes: readonly BucketSize[];
}

/** Data-file sizes against the target. */
export interface FileSizeReport {
  /** `target-file-size` in bytes. */
  readonly targetFileSize: number;
  /** Files below this many bytes are compaction candidates (`target × compaction.small-file-ratio`). */
  readonly smallFileBytes: number;
  readonly bins: readonly FileSizeBin[];
  /** Files per bin over the whole table. */
  readonly histogram: readonly number[];
  readonly smallFiles: number;
}

/** Totals over the live data files of the latest snapshot. */
export interface LiveFilesReport {
  readonly files: number;
  readonly bytes: number;
  /**
   * Records in the live files: for a primary-key table every version of a key and its deletes
   * (a read merges them), for any table also the rows {@link deletedRows} marks deleted.
   */
  readonly rows: number;
  /** Rows marked deleted by deletion vectors (0 without them); null when a vector does not record its count. */
  readonly deletedRows: number | null;
  readonly partitions: number;
  /** Distinct (partition, bucket) pairs holding files. */
  readonly buckets: number;
  /** Files per LSM level (primary-key tables; append files are all on level 0). */
  readonly levels: Readonly<Record<string, number>>;
}

/** The manifests of the latest snapshot. */
export interface ManifestReport {
  /** Data manifests (base + delta lists). */
  readonly count: number;
  readonly bytes: number;
  /** File entries they hold (ADD + DELETE). */
  readonly entries: number;
  /** DELETE entries, which manifest compaction folds away. */
  readonly deleteEntries: number;
  /** Size of the base and delta manifest lists. */
  readonly listBytes: number;
}

/** A maintenance job that could not be planned (e.g. compaction of a table kind it does not support). */
export interface JobNotPlanned {
  readonly status: 'not-planned';
  readonly reason: string;
}

/** What snapshot expiration would do now, with the table's retention options. */
export interface ExpirePlan {
  readonly status: 'planned';
  readonly snapshots: number;
  /** First and last snapshot id that would expire (null when none would). */
  readonly fromSnapshotId: number | null;
  readonly toSnapshotId: number | null;
  readonly files: number;
  readonly bytes: number;
  readonly retainMin: number;
  readonly retainMax: number;
  readonly timeRetainedMs: number;
  readonly expireLimit: number;
}

/** What orphan cleanup would delete now. */
export interface OrphanPlan {
  readonly status: 'planned';
  /** Threshold: files last modified before this time (ISO-8601) count. */
  readonly olderThan: string;
  readonly files: number;
  readonly bytes: number;
  /** Objects listed under the table directory. */
  readonly filesScanned: number;
}

/** What `compact` would merge in its next run. */
export interface CompactionPlan {
  readonly status: 'planned';
  /** `append` (small files bin-packed) or `primary-key` (universal compaction of sorted runs). */
  readonly mode: 'append' | 'primary-key';
  /** Files the next run rewrites. */
  readonly files: number;
  readonly bytes: number;
  readonly rows: number;
  readonly windows: number;
  readonly partitions: number;
  /** Windows left for later runs by the per-run file bound. */
  readonly remainingWindows: number;
  /**
   * The option deciding when a window is worth merging (`compaction.min.file-num` for append
   * tables, `num-sorted-run.compaction-trigger` for primary-key tables) and its value: small files
   * below it are not merged yet.
   */
  readonly trigger: { readonly option: string; readonly value: number };
}

/** What manifest compaction would rewrite. */
export interface ManifestCompactionPlan {
  readonly status: 'planned';
  readonly manifestsToMerge: number;
}

/** What each maintenance job would do if run now (dry runs of the jobs themselves). */
export interface MaintenanceOutlook {
  readonly expire: ExpirePlan | JobNotPlanned;
  readonly orphans: OrphanPlan | JobNotPlanned;
  readonly compaction: CompactionPlan | JobNotPlanned;
  readonly manifests: ManifestCompactionPlan | JobNotPlanned;
}

/** A picture of a table: everything `tidemark inspect` shows. */
export interface TableReport {
  readonly version: number;
  readonly table: string;
  /** When the report was made (ISO-8601 UTC) and the same in epoch millis. */
  readonly generatedAt: string;
  readonly generatedAtMillis: number;
  readonly schemaId: number;
  readonly primaryKeys: readonly string[];
  readonly partitionKeys: readonly string[];
  /** The table's `bucket` option (-1 dynamic / unaware, -2 postponed). */
  readonly bucket: number;
  readonly timeline: SnapshotTimeline;
  readonly tags: readonly { readonly name: string; readonly snapshotId: number }[];
  readonly liveFiles: LiveFilesReport;
  readonly fileSizes: FileSizeReport;
  /** The largest partitions by bytes, largest first (at most `largestPartitions`). */
  readonly largestPartitions: readonly PartitionReport[];
  /** Partitions with the most uneven buckets, most uneven first (only partitions spread over 2+ buckets). */
  readonly bucketSkew: readonly BucketSkew[];
  readonly manifests: ManifestReport;
  /** Absent when the report was made with `maintenance: false`. */
  readonly maintenance: MaintenanceOutlook | null;
}
