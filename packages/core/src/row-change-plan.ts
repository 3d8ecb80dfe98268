/**
 * What a delete, an update or an overwrite changes, as figures an operator can check before
 * running it for real: the plan of a dry run, and the same figures reported by the real run, so
 * the two can be compared.
 */
import type * as arrow from 'apache-arrow';
import type { TableSchema } from '@tidemark/format';
import { valueReader } from './read/arrow-values.js';
import type { FileStorePathFactory } from './path-factory.js';

/** Rows of one partition, the partition as `key → value` strings (as in its directory name; `{}` when unpartitioned). */
export interface PartitionRows {
  readonly partition: Readonly<Record<string, string>>;
  readonly rows: number;
}

/** A data file that gets (new or extended) deletion vectors, with the rows newly marked deleted in it. */
export interface DeletionVectorFilePlan {
  readonly partition: Readonly<Record<string, string>>;
  readonly bucket: number;
  /** Data file name (in the bucket directory of `partition`). */
  readonly file: string;
  readonly rows: number;
}

/**
 * The plan of `Table.delete` or `Table.update`, computed against the latest snapshot.
 *
 * No existing data file is rewritten by either: primary-key tables get new records (`-D`
 * records or upserts) in new data files, merged on read; append tables with deletion vectors get
 * their matched rows marked in deletion vectors (and, for an update, the new rows in new files).
 */
export interface RowChangePlan {
  /** The snapshot the change was planned against; null when the table has no snapshot. */
  readonly baseSnapshotId: number | null;
  /** Rows that match (primary-key tables: keys, each row of a key being one row). */
  readonly rowsMatched: number;
  /** `primary-key-records` (new records merged on read) or `deletion-vectors` (append tables). */
  readonly method: 'primary-key-records' | 'deletion-vectors';
  /** Matched rows per partition, ordered by partition directory. */
  readonly partitions: readonly PartitionRows[];
  /** Append tables: the data files whose matched rows are marked deleted, ordered by partition, bucket, file; empty for primary-key tables. */
  readonly deletionVectorFiles: readonly DeletionVectorFilePlan[];
}

/**
 * Progress of a delete or update, reported through `DeleteOptions.onProgress`: `scanning` while
 * the rows are looked for (append tables: data files read against `total`; primary-key tables:
 * `done` counts matched rows, no total), `writing` while new files are written, `committing`
 * while the snapshot is created.
 */
export interface RowChangeProgress {
  readonly phase: 'scanning' | 'writing' | 'committing';
  /** Data files scanned (append tables) or rows matched so far (primary-key tables, `unit` `rows`). */
  readonly done: number;
  readonly total?: number;
  readonly unit: 'files' | 'rows';
}

/** One partition an overwrite replaces, with its current content and the rows it would get. */
export interface OverwritePartitionPlan {
  readonly partition: Readonly<Record<string, string>>;
  /** Live data files of the partition now (all of them are replaced). */
  readonly currentFiles: number;
  /** Rows in those files (records as stored: before merging keys or applying deletion vectors). */
  readonly currentRows: number;
  /** Rows of the input that land in the partition. */
  readonly rowsWritten: number;
}

/** The plan of an overwrite (`Table.overwrite` or `TableCommit.planOverwrite` with a dry-run writer). */
export interface OverwritePlan {
  /** The snapshot the overwrite was planned against; null when the table has no snapshot. */
  readonly baseSnapshotId: number | null;
  /**
   * `dynamic`: the partitions that receive rows are replaced; `static`: the partitions matching the
   * given spec; `table`: the whole table.
   */
  readonly mode: 'dynamic' | 'static' | 'table';
  /** Replaced partitions and partitions that receive rows, ordered by partition directory. */
  readonly partitions: readonly OverwritePartitionPlan[];
  /** Sum of `currentFiles`: live data files the overwrite removes from the table. */
  readonly filesReplaced: number;
  /** Sum of `currentRows`. */
  readonly rowsReplaced: number;
  /** Sum of `rowsWritten`. */
  readonly rowsWritten: number;
}

/** Matched rows per partition of Arrow batches holding the table's columns, ordered by partition directory. */
export function partitionRowsOf(paths: FileStorePathFactory, schema: TableSchema, batches: readonly arrow.RecordBatch[]): PartitionRows[] {
  const counts = new Map<string, { partition: Record<string, string>; rows: number }>();
  const fields = schema.partitionKeys.map((k) => schema.fields.find((f) => f.name === k)!);
  for (const b of batches) {
    const readers = fields.map((f) => valueReader(b.getChild(f.name)!.data[0]!, f.type));
    for (let i = 0; i < b.numRows; i++) {
      const values = readers.map((read) => read(i));
      const dir = paths.partitionPath(values);
      const c = counts.get(dir);
      if (c) c.rows++;
      else counts.set(dir, { partition: paths.partitionSpec(values), rows: 1 });
    }
  }
  return [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
}
