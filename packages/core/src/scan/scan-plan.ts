/**
 * A planned scan: its splits, and counts and listings over them. The counts ask the planner's own
 * splits (`PlannedSplit`), which answer without decoding their files.
 */
import type { DataSplit, FileInfo } from './data-split.js';
import { PlannedSplit } from './planned-split.js';

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
