/**
 * The result of scan planning: live data files grouped into splits, one per (partition, bucket).
 */
import type { DataFileMeta, DeletionVectorRange, Value } from '@tidemark/format';
import { PlannedSplit } from './planned-split.js';

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

/** A planned scan. */
export class ScanPlan {
  constructor(
    /** Snapshot id planned, or null for a table without snapshots. */
    readonly snapshotId: number | null,
    readonly splits: readonly DataSplit[],
  ) {}

  /** Every planned file with partition, bucket, level, rows and size (for `tidemark files`). */
  files(): FileInfo[] {
    const out: FileInfo[] = [];
    for (const split of this.splits) {
      for (const f of split.files) {
        out.push({
          partition: split.partitionSpec,
          partitionPath: split.partitionPath,
          bucket: split.bucket,
          level: f.meta.level,
          rowCount: f.meta.rowCount,
          fileSize: f.meta.fileSize,
          fileName: f.meta.fileName,
          path: f.path,
          schemaId: f.meta.schemaId,
          minSequenceNumber: f.meta.minSequenceNumber,
          maxSequenceNumber: f.meta.maxSequenceNumber,
          deleteRowCount: f.meta.deleteRowCount,
          deletedByVector: split.deletionFiles.get(f.meta.fileName)?.range.cardinality ?? null,
        });
      }
    }
    return out;
  }

  /** Total rows of the planned files (before merging and deletion vectors). */
  get rowCount(): number {
    let n = 0;
    for (const s of this.splits) {
      if (s instanceof PlannedSplit) n += s.rowCount;
      else for (const f of s.files) n += f.meta.rowCount;
    }
    return n;
  }

  /** Number of planned files (without decoding them). */
  get fileCount(): number {
    let n = 0;
    for (const s of this.splits) n += s instanceof PlannedSplit ? s.fileCount : s.files.length;
    return n;
  }
}
