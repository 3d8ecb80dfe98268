/**
 * The fold of a plan's manifest entries into its live files (docs/format.md, "Scan planning"):
 * entries are pruned by partition, bucket and value stats, then each ADD adds its file to the
 * (partition, bucket) group and each DELETE removes it, by file identity, in manifest order.
 *
 * Entries of Avro blocks are folded from the registers of a {@link ManifestEntryWalker} (no
 * object per entry; the file's record bytes go to {@link PlanFiles}); entries of manifests the
 * walker cannot follow (ORC manifests, unknown writer schemas) are folded as decoded objects.
 */
import type { AvroBlock, DataFileMeta, ManifestEntry, ManifestEntryWalker, TableSchema } from '@tidemark/format';
import { CorruptTableError } from './errors.js';
import { PlanFiles, fullFileIdentity, hasPlainIdentity } from './plan-files.js';

/** Bucket number of `bucket-postpone` files (written by postpone-bucket tables, invisible to batch reads). */
const POSTPONE_BUCKET = -2;
/** Partition rows compared in place before one is looked up by its hex. */
const RECENT_PARTITIONS = 8;

/** What the fold asks of the scan. */
export interface FoldContext {
  /** Whether the partition row `bytes` passes the plan's partition filter. */
  partitionMatches(bytes: Uint8Array): boolean;
  /** A schema already loaded, or undefined. */
  loadedSchema(id: number): TableSchema | undefined;
  loadSchema(id: number): Promise<TableSchema>;
  /** The stats filter: false only when `file`'s value stats prove no row of it can match. */
  statsMightMatch(file: DataFileMeta, schema: TableSchema): boolean;
}

/** Options of one fold. */
export interface FoldOptions {
  readonly snapshotId: number;
  /** Only this bucket. */
  readonly bucket?: number;
  /**
   * Only the buckets this accepts (bucket pruning), asked with each entry's bucket and total
   * buckets before its file is decoded or kept.
   */
  readonly bucketSelector?: ((bucket: number, totalBuckets: number) => boolean) | null;
  /** Whether a stats filter applies (then every entry's stats are decoded). */
  readonly stats: boolean;
  /** Incremental plans: ADD entries only, appended without folding. */
  readonly addsOnly: boolean;
  /** ADD entries of the manifests, as their manifest list counts them (sizes the columns). */
  readonly expectedFiles: number;
}

/** One distinct partition row of the plan. */
export interface PlanPartition {
  /** The row, one copy shared by the plan's splits. */
  readonly bytes: Uint8Array;
  readonly hex: string;
  readonly accept: boolean;
  /** Group of each bucket opened in it. */
  readonly buckets: Map<number, number>;
}

/** A (partition, bucket) that entries were folded into. */
export interface PlanGroup {
  readonly partition: PlanPartition;
  readonly bucket: number;
}

/** A DELETE whose ADD has not been seen (yet). */
interface OrphanDelete {
  readonly fileName: string;
  readonly bucket: number;
  readonly level: number;
}

/** Folds the entries of one plan; one instance per plan. */
export class PlanFold {
  readonly files: PlanFiles;
  readonly groups: PlanGroup[] = [];
  private readonly partitions = new Map<string, PlanPartition>();
  private readonly recent: PlanPartition[] = [];
  private nextRecent = 0;
  private lastPartition: PlanPartition | null = null;
  private lastGroupPartition: PlanPartition | null = null;
  private lastBucket = 0;
  private lastGroup = -1;
  /** DELETEs whose ADD has not been seen, by group and identity: none in a sound table. */
  private readonly orphans = new Map<string, OrphanDelete>();

  /** The block being walked, and its manifest (for errors). */
  private block: Buffer = Buffer.alloc(0);
  private manifest = '';
  /** Schema the visitor stopped for. */
  private neededSchema = -1;

  constructor(
    private readonly ctx: FoldContext,
    private readonly options: FoldOptions,
  ) {
    this.files = new PlanFiles(options.expectedFiles);
  }

  /** Folds the entries of a block walked by `walker` (of manifest `manifest`, read from `path`). */
  async foldBlock(walker: ManifestEntryWalker, block: AvroBlock, manifest: string, path: string): Promise<void> {
    this.block = block.data;
    this.manifest = manifest;
    let from = 0;
    let pos = 0;
    for (;;) {
      from = walker.walk(block.data, block.count, block.index, path, this.visit, from, pos);
      if (from === block.count) return;
      // The visitor stopped at an entry whose schema is not loaded yet: load it, then walk on from there.
      pos = walker.resumeAt;
      await this.ctx.loadSchema(this.neededSchema);
    }
  }

  /** Folds decoded entries (of manifest `manifest`). */
  async foldEntries(entries: readonly ManifestEntry[], manifest: string): Promise<void> {
    this.manifest = manifest;
    for (const entry of entries) {
      const partition = this.partitionAt(entry.partition, 0, entry.partition.length);
      if (!partition.accept || !this.bucketAccepted(entry.bucket, entry.totalBuckets)) continue;
      if (this.options.addsOnly && entry.kind !== 'ADD') continue;
      const file = entry.file;
      if (this.options.stats) {
        const schema = this.ctx.loadedSchema(file.schemaId) ?? (await this.ctx.loadSchema(file.schemaId));
        if (!this.ctx.statsMightMatch(file, schema)) continue;
      }
      const group = this.groupOf(partition, entry.bucket);
      if (this.options.addsOnly) {
        this.files.appendObject(file, Buffer.from(file.fileName, 'utf8'), group, entry.totalBuckets);
        continue;
      }
      const key = (): string => `${group}|${hasPlainIdentity(file) ? `${file.level}|N${file.fileName}` : fullFileIdentity(file)}`;
      if (entry.kind === 'ADD') {
        if ((this.orphans.size > 0 && this.orphans.has(key())) || !this.files.addObject(file, group, entry.totalBuckets)) {
          this.addedTwice(file.fileName, entry.bucket, file.level);
        }
      } else if (!this.files.deleteObject(file, group)) {
        this.orphans.set(key(), { fileName: file.fileName, bucket: entry.bucket, level: file.level });
      }
    }
  }

  /**
   * Ends the fold.
   *
   * @throws CorruptTableError when a DELETE is left without its ADD.
   */
  finish(): void {
    const leftover = this.orphans.values().next().value;
    if (leftover !== undefined) {
      throw new CorruptTableError(
        `snapshot ${this.options.snapshotId}: manifest entries delete data file '${leftover.fileName}' (bucket ${leftover.bucket}, level ${leftover.level}) that no manifest of the snapshot adds; the table metadata is corrupt`,
      );
    }
  }

  /** Folds the entry the walker just read; false to stop the walk until {@link neededSchema} is loaded. */
  private readonly visit = (w: ManifestEntryWalker): boolean => {
    const block = this.block;
    const partition = this.partitionAt(block, w.partitionStart, w.partitionEnd);
    if (!partition.accept) return true;
    const bucket = w.bucket;
    if (!this.bucketAccepted(bucket, w.totalBuckets)) return true;
    const kind = w.kind;
    if (this.options.addsOnly && kind !== 0) return true;
    if (this.options.stats) {
      const file = w.fileAt(block, w.fileStart);
      const schema = this.ctx.loadedSchema(file.schemaId);
      if (schema === undefined) {
        this.neededSchema = file.schemaId;
        return false;
      }
      if (!this.ctx.statsMightMatch(file, schema)) return true;
    }
    const group = this.groupOf(partition, bucket);
    const identity = w.plainIdentity ? null : fullFileIdentity(w.fileAt(block, w.fileStart));
    if (this.options.addsOnly) {
      this.files.addWalked(w, block, group, identity, false);
    } else if (kind === 0) {
      if (
        (this.orphans.size > 0 && this.orphans.has(this.orphanKey(w, group, identity))) ||
        !this.files.addWalked(w, block, group, identity)
      ) {
        this.addedTwice(block.toString('utf8', w.nameStart, w.nameEnd), bucket, w.level);
      }
    } else if (!this.files.deleteWalked(w, block, group, identity)) {
      this.orphans.set(this.orphanKey(w, group, identity), {
        fileName: block.toString('utf8', w.nameStart, w.nameEnd),
        bucket,
        level: w.level,
      });
    }
    return true;
  };

  private orphanKey(w: ManifestEntryWalker, group: number, identity: string | null): string {
    return `${group}|${identity ?? `${w.level}|N${this.block.toString('utf8', w.nameStart, w.nameEnd)}`}`;
  }

  private addedTwice(fileName: string, bucket: number, level: number): never {
    throw new CorruptTableError(
      `snapshot ${this.options.snapshotId}: manifest ${this.manifest} adds data file '${fileName}' (bucket ${bucket}, level ${level}) which is already added`,
    );
  }

  private bucketAccepted(bucket: number, totalBuckets: number): boolean {
    if (bucket === POSTPONE_BUCKET || (this.options.bucket !== undefined && bucket !== this.options.bucket)) return false;
    const selector = this.options.bucketSelector;
    return selector === undefined || selector === null || selector(bucket, totalBuckets);
  }

  /** The group of a partition and bucket, opened on first use. */
  private groupOf(partition: PlanPartition, bucket: number): number {
    if (partition === this.lastGroupPartition && bucket === this.lastBucket) return this.lastGroup;
    let group = partition.buckets.get(bucket);
    if (group === undefined) {
      group = this.groups.length;
      this.groups.push({ partition, bucket });
      partition.buckets.set(bucket, group);
    }
    this.lastGroupPartition = partition;
    this.lastBucket = bucket;
    this.lastGroup = group;
    return group;
  }

  /**
   * The partition of the row `bytes[start, end)`. The rows of the last few partitions are
   * compared in place, without a view or a hex key: entries of a manifest come grouped by
   * partition, or cycle through a few.
   */
  private partitionAt(bytes: Uint8Array, start: number, end: number): PlanPartition {
    const n = end - start;
    const last = this.lastPartition;
    if (last !== null && sameRowAt(last.bytes, bytes, start, n)) return last;
    const recent = this.recent;
    for (let r = 0; r < recent.length; r++) {
      const p = recent[r]!;
      if (p !== last && sameRowAt(p.bytes, bytes, start, n)) {
        this.lastPartition = p;
        return p;
      }
    }
    const hex = Buffer.from(bytes.buffer, bytes.byteOffset + start, n).toString('hex');
    let p = this.partitions.get(hex);
    if (p === undefined) {
      const row = new Uint8Array(bytes.subarray(start, end));
      p = { bytes: row, hex, accept: this.ctx.partitionMatches(row), buckets: new Map() };
      this.partitions.set(hex, p);
    }
    recent[this.nextRecent] = p;
    this.nextRecent = (this.nextRecent + 1) % RECENT_PARTITIONS;
    this.lastPartition = p;
    return p;
  }
}

/**
 * Whether `row` equals `bytes[start, start + n)`; compared from the end, where partition values
 * differ (the row header rarely does).
 */
function sameRowAt(row: Uint8Array, bytes: Uint8Array, start: number, n: number): boolean {
  if (row.length !== n) return false;
  for (let i = n - 1; i >= 0; i--) if (row[i] !== bytes[start + i]) return false;
  return true;
}
