/**
 * The shapes of scan planning's result: live data files grouped into splits, one per (partition,
 * bucket). The plan itself is `scan-plan.ts`.
 */
import type { DataFileMeta, DeletionVectorRange, Value } from '@tidemark/format';

/** A data file of a split with its full location. */
export interface PlannedFile {
  readonly meta: DataFileMeta;
  /** Full location (`<bucket dir>/<file name>`, or `_EXTERNAL_PATH`). */
  readonly path: string;
}

/** Where one data file's deletion vector is stored. */
export interface DeletionFileRef {
  /** Full location of the DV index file. */
  readonly path: string;
  readonly range: DeletionVectorRange;
}

/** All files of one (partition, bucket) that a read must process together. */
export interface DataSplit {
  /** Snapshot the split was planned from. */
  readonly snapshotId: number;
  /** Serialized partition BinaryRow, as stored in manifests. */
  readonly partition: Uint8Array;
  /** Decoded partition values, in partition-key order (values.ts representation). */
  readonly partitionValues: readonly Value[];
  /** Partition as `key → string value`, as in partition directory names (unescaped). */
  readonly partitionSpec: Readonly<Record<string, string>>;
  /** Relative partition directory (`k=v/…/`, `''` when unpartitioned). */
  readonly partitionPath: string;
  readonly bucket: number;
  /** `_TOTAL_BUCKETS` of the entries (-1 for bucket-unaware / dynamic). */
  readonly totalBuckets: number;
  /** Full location of `bucket-<n>`. */
  readonly bucketPath: string;
  /**
   * Live files, ordered by level, then min sequence number, then name. Splits of a plan decode
   * their files when this is read and keep them only while the caller holds them (the plan keeps
   * its files as columns), so read it once per use and compare files by name, not by object.
   */
  readonly files: readonly PlannedFile[];
  /** Deletion vectors by data file name; empty when the table has none for this bucket. */
  readonly deletionFiles: ReadonlyMap<string, DeletionFileRef>;
}

/** One live data file as listed by `tidemark files`. */
export interface FileInfo {
  readonly partition: Readonly<Record<string, string>>;
  readonly partitionPath: string;
  readonly bucket: number;
  readonly level: number;
  readonly rowCount: number;
  readonly fileSize: number;
  readonly fileName: string;
  readonly path: string;
  readonly schemaId: number;
  readonly minSequenceNumber: bigint;
  readonly maxSequenceNumber: bigint;
  /** -U/-D rows (null = unknown). */
  readonly deleteRowCount: number | null;
  /** Rows marked deleted by a deletion vector (null when the file has none). */
  readonly deletedByVector: number | null;
}
