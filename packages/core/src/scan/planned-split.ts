/**
 * A split of a plan whose files stay as rows of the plan's {@link PlanFiles} until read: `files`
 * decodes the split's {@link PlannedFile}s when asked, and keeps them only while the caller does
 * (a weak reference), so a read going split by split holds one split's file objects at a time and
 * the plan itself keeps no object per file.
 */
import { joinPath } from '@tidemark/storage';
import type { DataFileMeta, Value } from '@tidemark/format';
import type { DataSplit, DeletionFileRef, PlannedFile } from './data-split.js';
import type { PlanFiles } from './plan-files.js';

/**
 * A planned file whose location is derived on first use from its bucket directory, so planning
 * neither builds nor keeps one path string per file.
 */
export class BucketFile implements PlannedFile {
  constructor(
    readonly meta: DataFileMeta,
    /** Full location of the file's bucket directory. */
    private readonly bucketPath: string,
  ) {}

  get path(): string {
    return this.meta.externalPath || joinPath(this.bucketPath, this.meta.fileName);
  }
}

/** What a split shares with the others of its partition. */
export interface SplitPartition {
  readonly partition: Uint8Array;
  readonly partitionValues: readonly Value[];
  readonly partitionSpec: Readonly<Record<string, string>>;
  readonly partitionPath: string;
}

/** A {@link DataSplit} over rows of a plan's columns. */
export class PlannedSplit implements DataSplit {
  readonly partition: Uint8Array;
  readonly partitionValues: readonly Value[];
  readonly partitionSpec: Readonly<Record<string, string>>;
  readonly partitionPath: string;
  readonly totalBuckets: number;
  #decoded: WeakRef<readonly PlannedFile[]> | null = null;

  constructor(
    readonly snapshotId: number,
    partition: SplitPartition,
    readonly bucket: number,
    readonly bucketPath: string,
    readonly deletionFiles: ReadonlyMap<string, DeletionFileRef>,
    private readonly store: PlanFiles,
    /** Rows of the split's files, in split order. */
    private readonly rows: Int32Array,
    /** Row of the first file added (its entry's total buckets are the split's). */
    firstAdded: number,
  ) {
    this.partition = partition.partition;
    this.partitionValues = partition.partitionValues;
    this.partitionSpec = partition.partitionSpec;
    this.partitionPath = partition.partitionPath;
    this.totalBuckets = store.totalBuckets(firstAdded);
  }

  /**
   * The split's files, decoded from the plan's columns on first use and kept while referenced
   * elsewhere: two reads far apart may get equal but distinct objects.
   */
  get files(): readonly PlannedFile[] {
    const cached = this.#decoded?.deref();
    if (cached !== undefined) return cached;
    const out: PlannedFile[] = new Array<PlannedFile>(this.rows.length);
    for (let i = 0; i < this.rows.length; i++) out[i] = new BucketFile(this.store.meta(this.rows[i]!), this.bucketPath);
    this.#decoded = new WeakRef(out);
    return out;
  }

  /** Number of files (without decoding them). */
  get fileCount(): number {
    return this.rows.length;
  }

  /** Rows of the files (before merging and deletion vectors), without decoding them. */
  get rowCount(): number {
    let n = 0;
    for (let i = 0; i < this.rows.length; i++) n += this.store.rowsOf(this.rows[i]!);
    return n;
  }

  /** Levels of the files, in split order, without decoding them. */
  levels(): number[] {
    return Array.from(this.rows, (r) => this.store.level(r));
  }
}
