/**
 * Scan planning of a snapshot (docs/format.md, "Scan planning"): read the base and delta manifest lists,
 * prune manifests by partition stats and bucket range, stream each manifest's entries, prune
 * entries by partition, bucket and value stats, fold ADD/DELETE by file identity (§4.6) straight
 * into the live files of each (partition, bucket), which become the splits, and attach deletion
 * vectors from the index manifest.
 *
 * Speed and memory: entries are walked in the Avro block bytes without building an object per
 * entry (`ManifestEntryWalker`), and a live file is kept as a row of the plan's columns with the
 * raw bytes of its `_FILE` record (`PlanFiles`), decoded into a `DataFileMeta` only when a caller
 * reads the split's files; manifests are fetched ahead and their blocks decompressed (off the main
 * thread) while the fold walks the block before.
 */
import type { FileIO } from '@tidemark/storage';
import {
  INDEX_TYPE_DELETION_VECTORS,
  deserializeBinaryRow,
  parsePartitionPath,
  readIndexManifest,
  readManifestList,
  type DataField,
  type IndexManifestEntry,
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
import type { DataSplit, DeletionFileRef } from './data-split.js';
import { ScanPlan } from './scan-plan.js';
import { manifestPieces } from './manifest-blocks.js';
import { PlanFold, type FoldContext } from './plan-fold.js';
import { PlannedSplit } from './planned-split.js';
import { CorruptTableError } from './errors.js';
import { ValueStatsEvolution } from './value-stats.js';

/** Filters applied while planning. All are optional; none means every live file. */
export interface ScanFilter {
  /** Predicate over partition columns only (see `partitionOnly`); prunes manifests and entries. */
  readonly partitionPredicate?: Predicate | null;
  /** Partition given as `key → value` strings as in directory names; all keys must match. */
  readonly partitionSpec?: Readonly<Record<string, string>>;
  /** Only this bucket. */
  readonly bucket?: number;
  /**
   * Only the buckets this accepts, given a file's bucket and the bucket count it was written with
   * (bucket pruning of a filter that fixes the bucket key, see `bucketSelector`); asked before the
   * file is decoded.
   */
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
    // The index manifest is independent of the data manifests: read along with them.
    const deletionFiles = this.loadDeletionFiles(snapshot);
    deletionFiles.catch(() => undefined); // awaited below
    const [base, delta] = await Promise.all([this.manifestList(snapshot.baseManifestList), this.manifestList(snapshot.deltaManifestList)]);
    // Whole manifests are skipped by their partition and bucket stats before any is read.
    const metas = [...base, ...delta].filter((m) => this.manifestMightMatch(m, filter));
    const fold = await this.fold(metas, filter, snapshot.id, false);
    fold.finish();
    return new ScanPlan(snapshot.id, this.splits(snapshot.id, fold, await deletionFiles));
  }

  /**
   * Plans the files ADDed by the delta manifest lists of `snapshots` (for incremental reads). No
   * folding across snapshots and no deletion vectors; DELETE entries are ignored.
   */
  async planDelta(snapshots: readonly Snapshot[], filter: ScanFilter = {}): Promise<ScanPlan> {
    const metas: ManifestFileMeta[] = [];
    for (const snapshot of snapshots) {
      const list = await this.manifestList(snapshot.deltaManifestList);
      for (const meta of list) if (meta.numAddedFiles > 0 && this.manifestMightMatch(meta, filter)) metas.push(meta);
    }
    const last = snapshots.length === 0 ? null : snapshots[snapshots.length - 1]!.id;
    const fold = await this.fold(metas, filter, last ?? 0, true);
    return new ScanPlan(last, this.splits(last ?? 0, fold, new Map()));
  }

  /** Folds the entries of `metas` (in order) into a plan's live files. */
  private async fold(metas: readonly ManifestFileMeta[], filter: ScanFilter, snapshotId: number, addsOnly: boolean): Promise<PlanFold> {
    const statsPredicate = filter.statsPredicate ?? null;
    const ctx: FoldContext = {
      partitionMatches: (bytes) => this.partitionMatches(bytes, filter),
      loadedSchema: (id) => this.schemaCache.get(id),
      loadSchema: (id) => this.fileSchema(id),
      statsMightMatch: (file, schema) => {
        const stats = this.statsEvolution.stats(file, schema);
        return stats === null || statsPredicate === null || mightMatch(statsPredicate, stats);
      },
    };
    const fold = new PlanFold(ctx, {
      snapshotId,
      ...(filter.bucket !== undefined ? { bucket: filter.bucket } : {}),
      bucketSelector: filter.bucketSelector ?? null,
      stats: statsPredicate !== null,
      addsOnly,
      expectedFiles: metas.reduce((n, m) => n + m.numAddedFiles, 0),
    });
    const pieces = manifestPieces(
      metas,
      (name) => this.manifestBytes(name),
      (name) => this.paths.manifestPath(name),
    );
    for await (const piece of pieces) {
      if (piece.walker !== null) await fold.foldBlock(piece.walker, piece.block, piece.meta.fileName, piece.path);
      else await fold.foldEntries(piece.entries, piece.meta.fileName);
    }
    return fold;
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

  /** The splits of a fold's groups that hold live files, ordered by partition bytes and bucket. */
  private splits(snapshotId: number, fold: PlanFold, deletionFiles: Map<string, Map<string, DeletionFileRef>>): DataSplit[] {
    const files = fold.files;
    const { rows, starts } = files.finish(fold.groups.length);
    const groups = fold.groups.map((g, index) => ({ ...g, index, key: `${g.partition.hex}|${padBucket(g.bucket)}` }));
    groups.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const splits: DataSplit[] = [];
    for (const { partition, bucket, index, key } of groups) {
      const from = starts[index]!;
      const to = starts[index + 1]!;
      if (from === to) continue;
      const info = this.partitionInfo(partition.bytes);
      const groupRows = rows.subarray(from, to);
      // The first file added gives the split's total buckets; read before the rows are ordered.
      const firstAdded = groupRows[0]!;
      splits.push(
        new PlannedSplit(
          snapshotId,
          { partition: partition.bytes, partitionValues: info.values, partitionSpec: info.spec, partitionPath: info.path },
          bucket,
          this.bucketPath(partition.bytes, bucket),
          deletionFiles.get(key) ?? new Map(),
          files,
          files.ordered(groupRows),
          firstAdded,
        ),
      );
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
