/**
 * The deletion vectors of one (partition, bucket) while a writer changes them (Java's
 * `BucketedDvMaintainer`): restored from the bucket's DV index file of the base snapshot, it
 * collects newly deleted row positions and drops the vectors of files compaction removed; at
 * commit it writes all of the bucket's vectors into one new DV index file that replaces the old
 * one (index-manifest ADD new + DELETE old).
 *
 * File order: Java keeps the vectors in a `HashMap<String, DeletionVector>` and writes them in its
 * iteration order, so {@link javaHashMapOrder} reproduces that order to write the same bytes.
 */
import type { FileIO } from '@tidemark/storage';
import {
  INDEX_TYPE_DELETION_VECTORS,
  MutableDeletionVector,
  deletionVectorsIndexFileMeta,
  encodeDeletionVectorFile,
  readDeletionVectors,
  type DeletionVector,
  type IndexFileMeta,
  type IndexManifestEntry,
} from '@tidemark/format';
import type { FileStorePathFactory } from '../path-factory.js';

/** Java `String.hashCode()` (UTF-16 code units, 32-bit overflow). */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * Keys in the iteration order of a Java `HashMap` of table size `capacity` into which they were
 * inserted in the given order: by bucket `(h ^ h >>> 16) & (capacity - 1)`, then insertion order.
 */
export function javaHashMapOrder<T>(keys: readonly T[], capacity: number, keyOf: (k: T) => string): T[] {
  const bucketOf = (k: T): number => {
    const h = javaStringHash(keyOf(k));
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys
    .map((k, i) => ({ k, i, b: bucketOf(k) }))
    .sort((a, b) => a.b - b.b || a.i - b.i)
    .map((x) => x.k);
}

/** Java `HashMap.tableSizeFor`: the power of two at or above `n` (at least 1). */
function tableSizeFor(n: number): number {
  let c = 1;
  while (c < n) c *= 2;
  return c;
}

/** Index changes of one bucket's deletion vectors for a commit. */
export interface DvIndexIncrement {
  readonly newIndexFiles: IndexFileMeta[];
  readonly deletedIndexFiles: IndexFileMeta[];
}

/** Writes the bytes of a new index file under `index/`; returns its name. */
export type WriteIndexFile = (bytes: Uint8Array) => Promise<string>;

/** Deletion vectors of one bucket (see the module comment). */
export class BucketDvMaintainer {
  private readonly vectors = new Map<string, MutableDeletionVector>();
  /** Table size of the Java HashMap that would hold the vectors (0 = not allocated yet). */
  private capacity = 0;
  private modified = false;

  private constructor(
    /** Write 64-bit vectors (`deletion-vectors.bitmap64`). */
    readonly bitmap64: boolean,
    /** The bucket's live DV index file(s) the next write replaces. */
    private baseFiles: IndexFileMeta[],
  ) {}

  /** A maintainer of a bucket with no deletion vectors. */
  static empty(bitmap64 = false): BucketDvMaintainer {
    return new BucketDvMaintainer(bitmap64, []);
  }

  /**
   * Restores the vectors of the bucket's DV index entries (`entries`: the ADD entries of type
   * DELETION_VECTORS of this partition and bucket in the base snapshot's index manifest).
   */
  static async restore(
    fileIO: FileIO,
    paths: FileStorePathFactory,
    entries: readonly IndexManifestEntry[],
    bitmap64 = false,
  ): Promise<BucketDvMaintainer> {
    const dv = entries.filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS && e.kind === 'ADD');
    const m = new BucketDvMaintainer(bitmap64, dv);
    let count = 0;
    // The files are read together and their vectors taken in entry order (the order Java's map
    // would see them in).
    const read = await Promise.all(
      dv.map((e) => readDeletionVectors(fileIO, paths.indexFilePath(e.fileName, e.externalPath), e.dvRanges ?? [])),
    );
    for (const vectors of read) {
      for (const [name, vector] of vectors) {
        m.vectors.set(name, MutableDeletionVector.copyOf(vector, bitmap64));
        count++;
      }
    }
    // Java copies the restored map into `new HashMap<>(map)`, sized for its entries.
    if (count > 0) m.capacity = tableSizeFor(Math.floor(count / 0.75 + 1));
    return m;
  }

  /** Whether vectors changed since the last {@link prepareCommit}. */
  get isModified(): boolean {
    return this.modified;
  }

  /** Number of data files with a vector. */
  get size(): number {
    return this.vectors.size;
  }

  /** Marks row `position` of `fileName` deleted; false when it already was. */
  notifyNewDeletion(fileName: string, position: number): boolean {
    let v = this.vectors.get(fileName);
    if (v === undefined) {
      v = new MutableDeletionVector(this.bitmap64);
      this.vectors.set(fileName, v);
      if (this.capacity === 0) this.capacity = 16;
      if (this.vectors.size > this.capacity * 0.75) this.capacity *= 2;
    }
    const added = v.delete(position);
    if (added) this.modified = true;
    return added;
  }

  /** Forgets the vector of a data file compaction removed. */
  removeDeletionVectorOf(fileName: string): void {
    if (this.vectors.delete(fileName)) this.modified = true;
  }

  deletionVectorOf(fileName: string): DeletionVector | undefined {
    return this.vectors.get(fileName);
  }

  isDeleted(fileName: string, position: number): boolean {
    return this.vectors.get(fileName)?.isDeleted(position) ?? false;
  }

  /**
   * When the vectors changed (or `force`): writes them all into one new index file (or, with
   * `targetSize`, files rolled at that size) and returns them as new, with the file(s) they
   * replace as deleted; otherwise no change. `force` makes every
   * compaction of a bucket replace its DV file, so that two writers compacting one bucket
   * concurrently always meet at commit (index-changes.ts).
   */
  async prepareCommit(write: WriteIndexFile, force = false, targetSize?: number): Promise<DvIndexIncrement> {
    if (!this.modified && !force) return { newIndexFiles: [], deletedIndexFiles: [] };
    const ordered = javaHashMapOrder([...this.vectors.keys()], Math.max(this.capacity, 1), (k) => k);
    // Java's rolling writer closes a file once it has grown past the target (bucket-unaware
    // tables); buckets keep everything in one file.
    const chunks: string[][] = [[]];
    let size = 1;
    for (const name of ordered) {
      if (targetSize !== undefined && size > targetSize) {
        chunks.push([]);
        size = 1;
      }
      chunks[chunks.length - 1]!.push(name);
      size += this.vectors.get(name)!.serialize().length;
    }
    const files: IndexFileMeta[] = [];
    for (const chunk of chunks) {
      if (chunk.length === 0 && targetSize !== undefined) continue;
      const { bytes, ranges } = encodeDeletionVectorFile(
        chunk.map((name) => [name, this.vectors.get(name)!] as const),
        this.bitmap64,
      );
      const name = await write(bytes);
      files.push(deletionVectorsIndexFileMeta(name, bytes.length, ranges));
    }
    const deleted = this.baseFiles;
    this.baseFiles = files;
    this.modified = false;
    return { newIndexFiles: files, deletedIndexFiles: deleted };
  }
}
