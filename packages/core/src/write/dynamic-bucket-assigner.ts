/**
 * Bucket assignment of primary-key tables with `bucket = -1` (dynamic bucket mode), with Java
 * Paimon's `HashBucketAssigner` / `PartitionIndex` semantics, and the maintenance of the hash index
 * files that record which key hashes each bucket holds (Java's `DynamicBucketIndexMaintainer`).
 *
 * Per partition, the assigner loads the HASH index files of its base snapshot (key hash -> bucket).
 * A key whose hash is indexed goes to that bucket. A new key goes to the first bucket (in bucket
 * order) that holds fewer than `dynamic-bucket.target-row-num` keys, else to a new bucket.
 * `dynamic-bucket.initial-buckets` = N partitions the key hashes as Java's N parallel assigners do:
 * hash h is placed by assigner |h % N| into the buckets b with |b % N| = |h % N|, so an empty
 * partition starts with N buckets. `dynamic-bucket.max-buckets` caps the bucket ids; past the cap,
 * new keys go to an existing bucket of their assigner chosen by hash (Java picks one at random; a
 * deterministic choice keeps two processes writing the same new key in agreement).
 *
 * After the write, every bucket that received new key hashes gets a new index file (its base
 * hashes plus the new ones) that replaces the old one in the commit. Keys sharing a hash share a
 * bucket, so the index stays a function of the hash. Across processes, the commit checks the
 * assignment against the hash indexes committed since the base snapshot (commit/index-changes.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from '@tidemark/storage';
import {
  INDEX_TYPE_HASH,
  decodeHashIndex,
  encodeHashIndex,
  hashIndexFileMeta,
  indexFileName,
  type IndexFileMeta,
  type IndexManifestEntry,
  type Snapshot,
} from '@tidemark/format';
import type { CommitMessage } from '../commit-message.js';
import { partitionKey } from '../commit/manifest-fold.js';
import { snapshotIndexEntries } from '../commit/index-changes.js';
import { TidemarkError } from '../errors.js';
import { SnapshotManager } from '../snapshot-manager.js';
import type { FileStorePathFactory } from '../path-factory.js';
import type { TableContext } from '../table-context.js';
import { IntToIntHashMap } from './int-hash-map.js';

/** Java's `MAX_DYNAMIC_BUCKETS` (bucket ids are stored as shorts in its assigner). */
export const MAX_DYNAMIC_BUCKETS = 32767;

/** A partition needs more buckets than dynamic bucket mode allows. */
export class DynamicBucketLimitError extends TidemarkError {}

/** Settings of dynamic bucket assignment (table options of the same names). */
export interface DynamicBucketOptions {
  /** `dynamic-bucket.target-row-num`: keys per bucket before new keys open another bucket. */
  readonly targetRowNum: number;
  /** `dynamic-bucket.initial-buckets`: number of hash-partitioned assigners (null or unset = 1). */
  readonly initialBuckets?: number | null;
  /** `dynamic-bucket.max-buckets`: highest bucket count per partition, -1 = unlimited. */
  readonly maxBuckets?: number;
}

/** The hash index change of one (partition, bucket), as the commit message carries it. */
export interface HashIndexChange {
  readonly partition: Uint8Array;
  readonly bucket: number;
  /** The bucket's new index file. */
  readonly newIndexFile: IndexFileMeta;
  /** The index file it replaces, null for a new bucket. */
  readonly replacedIndexFile: IndexFileMeta | null;
}

interface BucketState {
  /** Hashes of the base index file. */
  readonly base: Int32Array;
  readonly baseFile: IndexManifestEntry | null;
  /** Hashes this assigner placed here. */
  readonly added: number[];
}

class PartitionIndex {
  readonly hashToBucket: IntToIntHashMap;
  readonly buckets = new Map<number, BucketState>();
  /** Per assigner id: key count of each of its buckets still below the target, in bucket order. */
  readonly nonFull: Array<Map<number, number>>;
  /** Per assigner id: all its bucket ids, ascending. */
  readonly owned: number[][];
  readonly upperBoundReached: boolean[];
  /** Per assigner id: lowest bucket id not yet known to be taken (ids are never freed). */
  readonly nextFree: number[];

  constructor(
    readonly partition: Uint8Array,
    expected: number,
    assigners: number,
  ) {
    this.hashToBucket = new IntToIntHashMap(expected);
    this.nonFull = Array.from({ length: assigners }, () => new Map());
    this.owned = Array.from({ length: assigners }, () => []);
    this.upperBoundReached = new Array<boolean>(assigners).fill(false);
    this.nextFree = Array.from({ length: assigners }, (_, a) => a);
  }
}

/**
 * Assigns buckets to keys of a dynamic-bucket table and writes the hash index files of the
 * buckets it filled. One instance plans one commit against one base snapshot; partitions are
 * loaded on first use ({@link load}).
 */
export class DynamicBucketAssigner {
  /** Index files are named `index-<uuid>-<n>`; {@link indexFilePrefix} covers them all. */
  readonly uuid = randomUUID();
  private readonly partitions = new Map<string, PartitionIndex>();
  private readonly assigners: number;
  private readonly maxBuckets: number;
  private indexFileCount = 0;
  private readonly written: string[] = [];

  private baseSnapshot: Snapshot | null | undefined;

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: FileStorePathFactory,
    /**
     * Snapshot whose hash index the assignment starts from (null: empty table); `'latest'`: the
     * latest snapshot when the first partition is loaded.
     */
    base: Snapshot | null | 'latest',
    private readonly options: DynamicBucketOptions,
    /** Start every partition from an empty index (the write replaces the partitions). */
    private readonly ignoreExisting = false,
  ) {
    this.baseSnapshot = base === 'latest' ? undefined : base;
    this.assigners = options.initialBuckets ?? 1;
    this.maxBuckets = options.maxBuckets ?? -1;
    if (!Number.isInteger(options.targetRowNum) || options.targetRowNum <= 0) {
      throw new DynamicBucketLimitError(`dynamic-bucket.target-row-num must be a positive integer, got ${options.targetRowNum}`);
    }
    if (!Number.isInteger(this.assigners) || this.assigners <= 0 || this.assigners > MAX_DYNAMIC_BUCKETS) {
      throw new DynamicBucketLimitError(
        `dynamic-bucket.initial-buckets must be between 1 and ${MAX_DYNAMIC_BUCKETS}, got ${this.assigners}`,
      );
    }
  }

  /** An assigner for the table of `ctx`, with its `dynamic-bucket.*` options. */
  static forTable(ctx: TableContext, base: Snapshot | null | 'latest', ignoreExisting = false): DynamicBucketAssigner {
    const o = ctx.options;
    const options = {
      targetRowNum: o.dynamicBucketTargetRowNum,
      initialBuckets: o.dynamicBucketInitialBuckets,
      maxBuckets: o.dynamicBucketMaxBuckets,
    };
    return new DynamicBucketAssigner(ctx.fileIO, ctx.paths, base, options, ignoreExisting);
  }

  /** The base snapshot (undefined while a `'latest'` base is not resolved yet). */
  get base(): Snapshot | null | undefined {
    return this.baseSnapshot;
  }

  /** Id of the base snapshot, as commit messages record it. */
  get baseSnapshotId(): number | null {
    return this.baseSnapshot?.id ?? null;
  }

  private async resolveBase(): Promise<Snapshot | null> {
    if (this.baseSnapshot === undefined) {
      const latest = await new SnapshotManager(this.fileIO, this.paths).latest();
      if (this.baseSnapshot === undefined) this.baseSnapshot = latest;
    }
    return this.baseSnapshot;
  }

  /** File-name prefix of every index file this assigner writes (for in-flight records). */
  get indexFilePrefix(): string {
    return indexFileName(this.uuid, 0).slice(0, -1);
  }

  /** Names of the index files written so far (to delete when the write is aborted). */
  get writtenIndexFiles(): readonly string[] {
    return this.written;
  }

  private baseEntries: Promise<IndexManifestEntry[]> | null = null;

  /** Loads the base hash index of `partition` (no-op when loaded). */
  async load(partition: Uint8Array): Promise<void> {
    const key = partitionKey(partition);
    if (this.partitions.has(key)) return;
    const files = this.ignoreExisting
      ? []
      : (await (this.baseEntries ??= this.resolveBase().then((b) => snapshotIndexEntries(this.fileIO, this.paths, b)))).filter(
          (e) => e.indexType === INDEX_TYPE_HASH && partitionKey(e.partition) === key,
        );
    const loaded = await Promise.all(
      files.map(async (f) => {
        const path = this.paths.indexFilePath(f.fileName, f.externalPath);
        return { file: f, hashes: decodeHashIndex(await this.fileIO.read(path), path, f.rowCount) };
      }),
    );
    if (this.partitions.has(key)) return;
    const index = new PartitionIndex(
      partition,
      loaded.reduce((n, l) => n + l.hashes.length, 0),
      this.assigners,
    );
    loaded.sort((a, b) => a.file.bucket - b.file.bucket);
    for (const { file, hashes } of loaded) {
      for (const h of hashes) index.hashToBucket.set(h, file.bucket);
      index.buckets.set(file.bucket, { base: hashes, baseFile: file, added: [] });
      const a = this.assignerOf(file.bucket);
      index.owned[a]!.push(file.bucket);
      if (hashes.length < this.options.targetRowNum) index.nonFull[a]!.set(file.bucket, hashes.length);
    }
    this.partitions.set(key, index);
  }

  private assignerOf(n: number): number {
    return Math.abs(n % this.assigners);
  }

  /**
   * Bucket of the key with hash `keyHash` (of the trimmed primary key) in `partition`: a number
   * when the partition's index is loaded, else a promise that loads it first.
   *
   * @throws DynamicBucketLimitError when the partition would need more than 32767 buckets.
   */
  assign(partition: Uint8Array, keyHash: number): number | Promise<number> {
    const index = this.partitions.get(partitionKey(partition));
    if (index === undefined) {
      return this.load(partition).then(() => this.assignLoaded(this.partitions.get(partitionKey(partition))!, keyHash));
    }
    return this.assignLoaded(index, keyHash);
  }

  private assignLoaded(index: PartitionIndex, keyHash: number): number {
    const known = index.hashToBucket.get(keyHash);
    if (known >= 0) return known;

    const a = this.assignerOf(keyHash);
    const nonFull = index.nonFull[a]!;
    for (const [bucket, count] of nonFull) {
      if (count < this.options.targetRowNum) {
        nonFull.set(bucket, count + 1);
        return this.place(index, keyHash, bucket);
      }
      nonFull.delete(bucket);
    }
    const limit = (this.maxBuckets === -1 ? MAX_DYNAMIC_BUCKETS : this.maxBuckets) - 1;
    if (!index.upperBoundReached[a]) {
      for (let b = index.nextFree[a]!; b <= limit; b += this.assigners) {
        index.nextFree[a] = b + this.assigners;
        if (index.buckets.has(b)) continue;
        index.buckets.set(b, { base: new Int32Array(0), baseFile: null, added: [] });
        index.owned[a]!.push(b);
        nonFull.set(b, 1);
        return this.place(index, keyHash, b);
      }
      if (this.maxBuckets === -1) {
        throw new DynamicBucketLimitError(
          `a partition of ${this.paths.root} needs more than ${MAX_DYNAMIC_BUCKETS} buckets; ` +
            `raise 'dynamic-bucket.target-row-num' (now ${this.options.targetRowNum})`,
        );
      }
      index.upperBoundReached[a] = true;
    }
    const owned = index.owned[a]!;
    if (owned.length === 0) {
      // Cap below this assigner's first bucket id: Java fails the same way.
      throw new DynamicBucketLimitError(
        `'dynamic-bucket.max-buckets' = ${this.maxBuckets} leaves no bucket for keys of assigner ${a} of ` +
          `'dynamic-bucket.initial-buckets' = ${this.assigners}; use at least as many max buckets as initial buckets`,
      );
    }
    return this.place(index, keyHash, [...owned].sort((x, y) => x - y)[Math.abs(keyHash % owned.length)]!);
  }

  private place(index: PartitionIndex, hash: number, bucket: number): number {
    index.hashToBucket.set(hash, bucket);
    index.buckets.get(bucket)!.added.push(hash);
    return bucket;
  }

  /**
   * Writes a new index file for every bucket that received new key hashes and returns the
   * changes; the assigner then starts over from them (as if they were its base).
   */
  async prepareIndexFiles(): Promise<HashIndexChange[]> {
    const out: HashIndexChange[] = [];
    for (const index of this.partitions.values()) {
      for (const [bucket, state] of [...index.buckets].sort((x, y) => x[0] - y[0])) {
        if (state.added.length === 0) continue;
        const hashes = new Int32Array(state.base.length + state.added.length);
        hashes.set(state.base, 0);
        hashes.set(state.added, state.base.length);
        const bytes = encodeHashIndex(hashes);
        const name = indexFileName(this.uuid, this.indexFileCount++);
        this.written.push(name);
        await this.fileIO.write(this.paths.indexFilePath(name), bytes);
        const file = hashIndexFileMeta(name, bytes.length, hashes.length);
        out.push({ partition: index.partition, bucket, newIndexFile: file, replacedIndexFile: state.baseFile });
        index.buckets.set(bucket, { base: hashes, baseFile: { kind: 'ADD', partition: index.partition, bucket, ...file }, added: [] });
      }
    }
    return out;
  }

  /**
   * The writer's commit messages with this assigner's hash index changes: writes the index files
   * ({@link prepareIndexFiles}) and attaches them ({@link withHashIndexChanges}).
   */
  async prepareCommit(messages: readonly CommitMessage[]): Promise<CommitMessage[]> {
    return withHashIndexChanges(messages, await this.prepareIndexFiles(), this.baseSnapshotId);
  }

  inflightPrefixes(): string[] {
    return [this.indexFilePrefix];
  }

  abort(): Promise<void> {
    return this.deleteWrittenIndexFiles();
  }

  /** Deletes the index files this assigner wrote (best effort; for aborted writes). */
  async deleteWrittenIndexFiles(): Promise<void> {
    try {
      await this.fileIO.deleteMany(this.written.map((n) => this.paths.indexFilePath(n)));
    } catch {
      // Left-overs are orphans that orphan-file cleanup removes.
    }
    this.written.length = 0;
  }
}

/**
 * `messages` with the hash index changes attached to the message of their (partition, bucket)
 * and every message of a loaded partition stamped with the assigner's base snapshot. A change
 * without a message gets one with no data files.
 */
export function withHashIndexChanges(
  messages: readonly CommitMessage[],
  changes: readonly HashIndexChange[],
  baseSnapshotId: number | null,
): CommitMessage[] {
  const key = (p: Uint8Array, b: number): string => `${partitionKey(p)}|${b}`;
  const byBucket = new Map<string, HashIndexChange>();
  for (const c of changes) byBucket.set(key(c.partition, c.bucket), c);
  const out: CommitMessage[] = messages.map((m) => {
    const c = byBucket.get(key(m.partition, m.bucket));
    byBucket.delete(key(m.partition, m.bucket));
    return {
      ...m,
      indexBaseSnapshotId: baseSnapshotId,
      ...(c === undefined
        ? {}
        : {
            newIndexFiles: [...(m.newIndexFiles ?? []), c.newIndexFile],
            deletedIndexFiles: [...(m.deletedIndexFiles ?? []), ...(c.replacedIndexFile === null ? [] : [c.replacedIndexFile])],
          }),
    };
  });
  for (const c of byBucket.values()) {
    out.push({
      partition: c.partition,
      bucket: c.bucket,
      totalBuckets: -1,
      newFiles: [],
      newIndexFiles: [c.newIndexFile],
      deletedIndexFiles: c.replacedIndexFile === null ? [] : [c.replacedIndexFile],
      indexBaseSnapshotId: baseSnapshotId,
    });
  }
  return out;
}
