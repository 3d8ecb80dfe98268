/**
 * Scan planning of a snapshot (docs/format.md, "Scan planning"): read the base and delta manifest lists,
 * prune manifests by partition stats and bucket range, stream each manifest's entries, prune
 * entries by partition, bucket and value stats, fold ADD/DELETE by file identity (§4.6) straight
 * into the live files of each (partition, bucket), which become the splits, and attach deletion
 * vectors from the index manifest.
 *
 * Speed and memory: entries are decoded straight from the Avro bytes with their stats left encoded
 * (decoded only for a stats filter); the partition and bucket of an entry are checked on its raw
 * bytes before the rest is decoded, once per distinct partition; several manifests are fetched
 * ahead and two decoded at once (folded in manifest order); an entry is dropped as soon as it is
 * folded, so the plan holds about one small object graph per live file and no manifest block.
 */
import type { FileIO } from '@tidemark/storage';
import {
  INDEX_TYPE_DELETION_VECTORS,
  deserializeBinaryRow,
  parsePartitionPath,
  decodeManifestEntryBatches,
  ByteArena,
  readIndexManifest,
  readManifestList,
  type DataField,
  type IndexManifestEntry,
  type ManifestDecodeOptions,
  type ManifestEntry,
  type ManifestFileMeta,
  type Snapshot,
  type TableSchema,
  type Value,
} from '@tidemark/format';
import { evaluate, mightMatch, statsFromRows, type Predicate } from '../predicate.js';
import type { SchemaManager } from '../schema-manager.js';
import type { TablePaths } from '../table-paths.js';
import type { FileStorePathFactory } from '../path-factory.js';
import { isTableContext, tableContext, type TableContext } from '../table-context.js';
import type { ReadCache } from '../read/read-cache.js';
import type { BucketSelector } from './bucket-filter.js';
import { EntryCompactor } from './compact-meta.js';
import { BucketFiles } from './live-files.js';
import { ScanPlan, type DataSplit, type DeletionFileRef } from './data-split.js';
import { CorruptTableError } from './errors.js';
import { ValueStatsEvolution } from './value-stats.js';

/**
 * Manifests whose bytes are fetched at once, ahead of the one being folded: on an object store
 * planning is otherwise one round trip per manifest in a row. Bounds the bytes held to this many
 * manifests (each at most `manifest.target-file-size`, 8 MiB by default, usually far less).
 */
const MANIFEST_WINDOW = 8;

/**
 * Manifests decoded at once (the one being folded included), so zstd decompression of the next
 * runs off the main thread while entries of this one are decoded. Fewer than are fetched: entries
 * decoded far ahead of the fold outlive young-generation collections and are copied and promoted
 * before being dropped; folded soon after decoding, they die young.
 */
const DECODE_WINDOW = 2;

/** Bucket number of `bucket-postpone` files (written by postpone-bucket tables, invisible to batch reads). */
const POSTPONE_BUCKET = -2;

/** Filters applied while planning. All are optional; none means every live file. */
export interface ScanFilter {
  /** Predicate over partition columns only (see `partitionOnly`); prunes manifests and entries. */
  readonly partitionPredicate?: Predicate | null;
  /** Partition given as `key → value` strings as in directory names; all keys must match. */
  readonly partitionSpec?: Readonly<Record<string, string>>;
  /** Only this bucket. */
  readonly bucket?: number;
  /** Only the buckets this accepts (bucket pruning of a filter that fixes the bucket key, see `bucketSelector`). */
  readonly bucketSelector?: BucketSelector | null;
  /**
   * Predicate used only to skip files by their value stats (never to filter rows). Callers must
   * pass only conjuncts that are safe for the table kind (key columns for merge-on-read tables).
   */
  readonly statsPredicate?: Predicate | null;
}

/** Options of {@link FileStoreScan}. */
export interface FileStoreScanOptions {
  /** Keeps manifest lists, manifests and index manifests between plans (see `ReadCache`). */
  readonly cache?: ReadCache | null;
}

/** Plans scans of one table; `readSchema` is the schema partition values and stats are mapped to. */
export class FileStoreScan {
  private readonly partitionFields: DataField[];
  private readonly statsEvolution: ValueStatsEvolution;
  private readonly schemaCache = new Map<number, TableSchema>();

  private readonly fileIO: FileIO;
  private readonly paths: FileStorePathFactory;
  private readonly schemas: SchemaManager;
  private readonly readSchema: TableSchema;
  private readonly cache: ReadCache | null;

  /**
   * Plans scans with `context.schema` as the read schema; `schemas` reads the schemas files were
   * written with; `options.cache` keeps the metadata files read (a long-lived table's reads).
   */
  constructor(context: TableContext, schemas: SchemaManager, options?: FileStoreScanOptions);
  /** Shorthand: the context is built from the storage, the paths' root and branch, and the read schema. */
  constructor(fileIO: FileIO, paths: TablePaths, schemas: SchemaManager, readSchema: TableSchema);
  constructor(
    first: TableContext | FileIO,
    second: SchemaManager | TablePaths,
    third?: SchemaManager | FileStoreScanOptions,
    fourth?: TableSchema,
  ) {
    const ctx = isTableContext(first)
      ? first
      : tableContext(first, (second as TablePaths).root, fourth!, { branch: (second as TablePaths).branch });
    this.fileIO = ctx.fileIO;
    this.paths = ctx.paths;
    this.schemas = isTableContext(first) ? (second as SchemaManager) : (third as SchemaManager);
    this.cache = isTableContext(first) ? ((third as FileStoreScanOptions | undefined)?.cache ?? null) : null;
    this.readSchema = ctx.schema;
    const readSchema = ctx.schema;
    this.partitionFields = readSchema.partitionKeys.map((k) => {
      const f = readSchema.fields.find((x) => x.name === k);
      if (!f) throw new CorruptTableError(`schema ${readSchema.id}: partition key '${k}' is not a column`);
      return f;
    });
    this.statsEvolution = new ValueStatsEvolution(readSchema.fields);
  }

  /**
   * Plans a full read of `snapshot`: all live files (base + delta manifest lists), grouped into splits.
   *
   * @throws CorruptTableError when folding leaves a DELETE without its ADD, or a file is added twice.
   */
  async plan(snapshot: Snapshot | null, filter: ScanFilter = {}): Promise<ScanPlan> {
    if (snapshot === null) return new ScanPlan(null, []);
    const [base, delta] = await Promise.all([this.manifestList(snapshot.baseManifestList), this.manifestList(snapshot.deltaManifestList)]);
    // Whole manifests are skipped by their partition and bucket stats before any is read.
    const metas = [...base, ...delta].filter((m) => this.manifestMightMatch(m, filter));
    const run = new PlanRun(this, filter);
    // DELETEs whose ADD has not been seen (yet), by full identity: none in a sound table.
    const orphanDeletes = new Map<string, ManifestEntry>();
    let last: BucketFiles | null = null;
    for await (const { meta, entries } of this.decodeAhead(metas, run)) {
      for (const entry of entries) {
        // Entries come in runs of one partition and bucket: the bucket is looked up once per run.
        const files =
          last !== null && entry.partition === run.lastPartition && entry.bucket === run.lastBucket
            ? last
            : (last = run.bucketFiles(entry.partition, entry.bucket, entry.totalBuckets));
        if (entry.kind === 'ADD') {
          if ((orphanDeletes.size > 0 && orphanDeletes.has(run.identity(entry))) || !files.add(entry.file, entry.totalBuckets)) {
            throw new CorruptTableError(
              `snapshot ${snapshot.id}: manifest ${meta.fileName} adds data file '${entry.file.fileName}' (bucket ${entry.bucket}, level ${entry.file.level}) which is already added`,
            );
          }
        } else if (!files.delete(entry.file)) {
          orphanDeletes.set(run.identity(entry), entry);
        }
      }
    }
    const leftover = orphanDeletes.values().next().value;
    if (leftover !== undefined) {
      const e = leftover;
      throw new CorruptTableError(
        `snapshot ${snapshot.id}: manifest entries delete data file '${e.file.fileName}' (bucket ${e.bucket}, level ${e.file.level}) that no manifest of the snapshot adds; the table metadata is corrupt`,
      );
    }
    const deletionFiles = await this.loadDeletionFiles(snapshot);
    return new ScanPlan(snapshot.id, this.splits(snapshot.id, run, deletionFiles));
  }

  /**
   * The kept (filtered, compacted) entries of each of `metas`, in manifest order, fetched up to
   * {@link MANIFEST_WINDOW} and decoded up to {@link DECODE_WINDOW} manifests at once (folding needs
   * manifest order; reading and decoding do not). Stopping early waits for the work in flight.
   */
  private async *decodeAhead(
    metas: readonly ManifestFileMeta[],
    run: PlanRun,
  ): AsyncGenerator<{ meta: ManifestFileMeta; entries: ManifestEntry[] }> {
    const reads: Array<Promise<Uint8Array>> = [];
    const decodes: Array<Promise<ManifestEntry[]>> = [];
    let nextRead = 0;
    const fill = (): void => {
      while (nextRead < metas.length && reads.length < MANIFEST_WINDOW) {
        const p = this.manifestBytes(metas[nextRead++]!.fileName);
        p.catch(() => undefined); // awaited in order below
        reads.push(p);
      }
      while (reads.length > 0 && decodes.length < DECODE_WINDOW) {
        const meta = metas[nextRead - reads.length]!;
        const p = this.decodeManifest(meta, run, false, reads.shift()!);
        p.catch(() => undefined);
        decodes.push(p);
      }
    };
    try {
      for (let i = 0; i < metas.length; i++) {
        fill();
        const entries = await decodes.shift()!;
        yield { meta: metas[i]!, entries };
      }
    } finally {
      await Promise.allSettled([...reads, ...decodes]);
    }
  }

  /**
   * Reads one manifest (or takes its bytes being read) and returns its entries that pass the
   * filter, compacted (ADDs only with `addsOnly`).
   */
  private async decodeManifest(
    meta: ManifestFileMeta,
    run: PlanRun,
    addsOnly: boolean,
    reading?: Promise<Uint8Array>,
  ): Promise<ManifestEntry[]> {
    const path = this.paths.manifestPath(meta.fileName);
    const bytes = await (reading ?? this.manifestBytes(meta.fileName));
    const kept: ManifestEntry[] = [];
    const statsPredicate = run.filter.statsPredicate;
    const selector = run.filter.bucketSelector;
    for await (const batch of decodeManifestEntryBatches(bytes, path, run.decodeOptions)) {
      for (const entry of batch) {
        if (addsOnly && entry.kind !== 'ADD') continue;
        if (selector && !selector(entry.bucket, entry.totalBuckets)) continue;
        if (statsPredicate) {
          const schema = this.schemaCache.get(entry.file.schemaId) ?? (await this.fileSchema(entry.file.schemaId));
          const stats = this.statsEvolution.stats(entry.file, schema);
          if (stats && !mightMatch(statsPredicate, stats)) continue;
        }
        // Byte fields are already in the run's arena; only string lists are left to share.
        kept.push(run.compactor.sharedLists(entry));
      }
    }
    return kept;
  }

  /**
   * Plans the files ADDed by the delta manifest lists of `snapshots` (for incremental reads). No
   * folding across snapshots and no deletion vectors; DELETE entries are ignored.
   */
  async planDelta(snapshots: readonly Snapshot[], filter: ScanFilter = {}): Promise<ScanPlan> {
    const run = new PlanRun(this, filter);
    for (const snapshot of snapshots) {
      const metas = await this.manifestList(snapshot.deltaManifestList);
      for (const meta of metas) {
        if (meta.numAddedFiles === 0 || !this.manifestMightMatch(meta, filter)) continue;
        for (const entry of await this.decodeManifest(meta, run, true)) {
          run.bucketFiles(entry.partition, entry.bucket, entry.totalBuckets).append(entry.file, entry.totalBuckets);
        }
      }
    }
    const last = snapshots.length === 0 ? null : snapshots[snapshots.length - 1]!.id;
    return new ScanPlan(last, this.splits(last ?? 0, run, new Map()));
  }

  private manifestList(name: string): Promise<ManifestFileMeta[]> {
    const read = (): Promise<ManifestFileMeta[]> => readManifestList(this.fileIO, this.paths.manifestPath(name));
    return this.cache === null ? read() : this.cache.manifestList(name, read);
  }

  private manifestBytes(name: string): Promise<Uint8Array> {
    const read = (): Promise<Uint8Array> => this.fileIO.read(this.paths.manifestPath(name));
    return this.cache === null ? read() : this.cache.manifest(name, read);
  }

  private manifestMightMatch(meta: ManifestFileMeta, filter: ScanFilter): boolean {
    if (filter.bucket !== undefined && meta.minBucket !== null && meta.maxBucket !== null) {
      if (filter.bucket < meta.minBucket || filter.bucket > meta.maxBucket) return false;
    }
    if (filter.partitionSpec && this.partitionFields.length > 0 && !this.specMightMatch(meta, filter.partitionSpec)) return false;
    const pred = filter.partitionPredicate;
    if (pred && this.partitionFields.length > 0) {
      try {
        const types = this.partitionFields.map((f) => f.type);
        const min = deserializeBinaryRow(meta.partitionStats.minValues, types);
        const max = deserializeBinaryRow(meta.partitionStats.maxValues, types);
        const stats = statsFromRows(
          this.partitionFields.map((f) => f.name),
          min,
          max,
          meta.partitionStats.nullCounts,
          null,
        );
        if (!mightMatch(pred, stats)) return false;
      } catch {
        // Undecodable stats (e.g. an old partition type): read the manifest.
      }
    }
    return true;
  }

  /**
   * False only when the manifest's partition stats prove that no partition in it has the spec's
   * values: a manifest holding a single partition (min = max) whose path differs on a spec key.
   */
  private specMightMatch(meta: ManifestFileMeta, spec: Readonly<Record<string, string>>): boolean {
    const { minValues, maxValues, nullCounts } = meta.partitionStats;
    if (minValues.length !== maxValues.length || !Buffer.from(minValues).equals(Buffer.from(maxValues))) return true;
    // Nulls are not in min/max: with any, the manifest may hold the default partition too.
    if (nullCounts === null || nullCounts.some((n) => n !== 0)) return true;
    try {
      const info = this.partitionInfo(minValues);
      for (const [k, v] of Object.entries(spec)) if (k in info.spec && info.spec[k] !== v) return false;
    } catch {
      // Undecodable stats: read the manifest.
    }
    return true;
  }

  private readonly partitionCache = new Map<string, { values: Value[]; path: string; spec: Record<string, string> }>();

  /** Decoded values, relative path and string spec of a partition row (cached by bytes). */
  partitionInfo(bytes: Uint8Array): { values: Value[]; path: string; spec: Record<string, string> } {
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
    let info = this.partitionCache.get(key);
    if (!info) {
      const values = deserializeBinaryRow(
        bytes,
        this.partitionFields.map((f) => f.type),
      );
      const path = this.paths.partitionPath(values);
      const spec: Record<string, string> = {};
      for (const [k, v] of parsePartitionPath(path)) spec[k] = v;
      info = { values, path, spec };
      this.partitionCache.set(key, info);
    }
    return info;
  }

  /** Whether entries of the partition row `bytes` pass the partition parts of `filter` (once per partition and plan). */
  partitionMatches(bytes: Uint8Array, filter: ScanFilter): boolean {
    if (this.partitionFields.length === 0 || (!filter.partitionSpec && !filter.partitionPredicate)) return true;
    const info = this.partitionInfo(bytes);
    if (filter.partitionSpec) {
      for (const [k, v] of Object.entries(filter.partitionSpec)) if (info.spec[k] !== v) return false;
    }
    if (filter.partitionPredicate) {
      const byName: Record<string, unknown> = {};
      this.partitionFields.forEach((f, i) => (byName[f.name] = info.values[i]));
      if (evaluate(filter.partitionPredicate, byName) !== true) return false;
    }
    return true;
  }

  private async fileSchema(id: number): Promise<TableSchema> {
    let s = this.schemaCache.get(id);
    if (!s) {
      s = id === this.readSchema.id ? this.readSchema : await this.schemas.schema(id);
      this.schemaCache.set(id, s);
    }
    return s;
  }

  /** Deletion-vector locations by `partitionHex|bucket` → data file name. */
  private async loadDeletionFiles(snapshot: Snapshot): Promise<Map<string, Map<string, DeletionFileRef>>> {
    const out = new Map<string, Map<string, DeletionFileRef>>();
    if (!snapshot.indexManifest) return out;
    const name = snapshot.indexManifest;
    const read = (): Promise<IndexManifestEntry[]> => readIndexManifest(this.fileIO, this.paths.manifestPath(name));
    const entries = await (this.cache === null ? read() : this.cache.indexManifest(name, read));
    for (const e of entries) {
      if (e.kind !== 'ADD' || e.indexType !== INDEX_TYPE_DELETION_VECTORS || !e.dvRanges) continue;
      const key = splitKey(e.partition, e.bucket);
      let files = out.get(key);
      if (!files) out.set(key, (files = new Map()));
      const path = e.externalPath ?? this.paths.indexPath(e.fileName);
      for (const range of e.dvRanges) files.set(range.dataFileName, { path, range });
    }
    return out;
  }

  /** The splits of a run's buckets that hold live files, ordered by partition bytes and bucket. */
  private splits(snapshotId: number, run: PlanRun, deletionFiles: Map<string, Map<string, DeletionFileRef>>): DataSplit[] {
    const splits: DataSplit[] = [];
    for (const { key, partition, bucket, files } of run.buckets()) {
      if (files.size === 0) continue;
      const info = this.partitionInfo(partition);
      splits.push({
        snapshotId,
        partition,
        partitionValues: info.values,
        partitionSpec: info.spec,
        partitionPath: info.path,
        bucket,
        totalBuckets: files.totalBuckets,
        bucketPath: files.bucketPath,
        files: files.files(),
        deletionFiles: deletionFiles.get(key) ?? new Map(),
      });
    }
    return splits;
  }

  /** Full location of the bucket directory of a partition row (a shared row of a run). */
  bucketPath(partition: Uint8Array, bucket: number): string {
    return this.paths.bucketDir(this.partitionInfo(partition).path, bucket);
  }
}

/** The bucket part of a split key (fixed width, so keys sort by bucket within a partition). */
function padBucket(bucket: number): string {
  return String(bucket).padStart(11, '0');
}

function splitKey(partition: Uint8Array, bucket: number): string {
  return `${Buffer.from(partition.buffer, partition.byteOffset, partition.byteLength).toString('hex')}|${padBucket(bucket)}`;
}

/** What a planning run knows of one distinct partition row. */
interface PartitionState {
  /** Number of the partition in the run (short identity strings). */
  readonly id: number;
  /** Whether the partition passes the run's partition filter. */
  readonly accept: boolean;
  readonly hex: string;
  /** Live files by bucket. */
  readonly buckets: Map<number, BucketFiles>;
}

/**
 * State of one planning run shared by the manifests decoded at once: the compactor (shared rows),
 * the verdict of the partition filter, a short id per distinct partition row and the live files
 * of each (partition, bucket).
 */
class PlanRun {
  readonly compactor = new EntryCompactor();
  readonly decodeOptions: ManifestDecodeOptions;
  private readonly partitions = new Map<Uint8Array, PartitionState>();
  /** Partition and bucket of the last {@link bucketFiles} call. */
  lastPartition: Uint8Array | null = null;
  lastBucket = 0;

  constructor(
    private readonly scan: FileStoreScan,
    readonly filter: ScanFilter,
  ) {
    const bucket = filter.bucket;
    this.decodeOptions = {
      copyBytes: false,
      lazyStats: true,
      arena: new ByteArena(),
      partition: (block, start, end) => {
        const shared = this.compactor.partitionAt(block, start, end);
        return this.partition(shared).accept ? shared : undefined;
      },
      acceptBucket: (b) => b !== POSTPONE_BUCKET && (bucket === undefined || b === bucket),
    };
  }

  private partition(shared: Uint8Array): PartitionState {
    let p = this.partitions.get(shared);
    if (p === undefined) {
      p = {
        id: this.partitions.size,
        accept: this.scan.partitionMatches(shared, this.filter),
        hex: Buffer.from(shared).toString('hex'),
        buckets: new Map(),
      };
      this.partitions.set(shared, p);
    }
    return p;
  }

  /** The live files of a (shared) partition row and bucket, opened by an entry with `totalBuckets`. */
  bucketFiles(partition: Uint8Array, bucket: number, totalBuckets: number): BucketFiles {
    const p = this.partition(partition);
    let files = p.buckets.get(bucket);
    if (files === undefined) {
      files = new BucketFiles(this.scan.bucketPath(partition, bucket), totalBuckets);
      p.buckets.set(bucket, files);
    }
    this.lastPartition = partition;
    this.lastBucket = bucket;
    return files;
  }

  /** Every (partition, bucket) opened in this run, ordered by the split key (partition hex, then bucket). */
  buckets(): Array<{ key: string; partition: Uint8Array; bucket: number; files: BucketFiles }> {
    const out: Array<{ key: string; partition: Uint8Array; bucket: number; files: BucketFiles }> = [];
    for (const [partition, p] of this.partitions) {
      for (const [bucket, files] of p.buckets) out.push({ key: `${p.hex}|${padBucket(bucket)}`, partition, bucket, files });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Identity of an entry for ADD/DELETE folding, as `fileEntryIdentity` but with the partition's
   * id in this run instead of its hex bytes (entries' partitions are the shared rows).
   */
  identity(entry: ManifestEntry): string {
    const f = entry.file;
    const head = `${this.partition(entry.partition).id}|${entry.bucket}|${f.level}|`;
    if (f.extraFiles.length === 0 && f.embeddedIndex === null && f.externalPath === null) return `${head}N${f.fileName}`;
    const index = f.embeddedIndex === null ? null : Buffer.from(f.embeddedIndex).toString('hex');
    return `${head}J${JSON.stringify([f.fileName, f.extraFiles, index, f.externalPath])}`;
  }
}
