/**
 * Snapshot order for primary-key writes from several processes.
 *
 * Java Paimon assumes one writer per bucket: sequence numbers, which decide which version of a key
 * wins on read and in compaction, then grow with commit order by construction. tidemark commits
 * lock-free from any number of processes, so two writers may both continue a bucket from the same
 * maximum and produce overlapping sequence numbers; the reader would then pick a winner by row
 * order, not by which snapshot came later.
 *
 * {@link SequenceOrderGuard} restores the rule "a later snapshot wins": on every commit attempt,
 * after rebasing onto the latest snapshot, it compares each bucket's new files with the highest
 * sequence number live in that bucket. When a file committed meanwhile reaches our minimum, our new
 * files of that bucket are rewritten with every sequence number shifted by the same amount, to just
 * above the bucket's maximum; the relative order of our own records is kept. Only the
 * `_SEQUENCE_NUMBER` column changes, so keys, values, row kinds and statistics are copied as they
 * are. The rewritten files replace ours in the commit; the superseded ones are deleted once the
 * snapshot exists.
 */
import { randomUUID } from 'node:crypto';
import * as arrow from 'apache-arrow';
import {
  SEQUENCE_NUMBER_FIELD_NAME,
  conformToPaimonTypes,
  encodeParquetAsync,
  keyValueFileFields,
  keyValuePlainColumns,
  readParquetFile,
  trimmedPrimaryKeys,
  type DataFileMeta,
  type ManifestEntry,
  type ParquetCompression,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import { SchemaManager } from '../schema-manager.js';
import { SnapshotManager } from '../snapshot-manager.js';
import type { TableContext } from '../table-context.js';
import { CommitInputError } from './commit-errors.js';
import { liveEntries, partitionKey } from './manifest-fold.js';
import { storageManifestSource, type ManifestSource } from './metadata-cache.js';

const COMPRESSIONS: Record<string, ParquetCompression> = {
  zstd: 'zstd',
  snappy: 'snappy',
  lz4: 'lz4',
  gzip: 'gzip',
  none: 'none',
  uncompressed: 'none',
};

/** Highest sequence number per `(partition, bucket)` as of one snapshot, for a set of partitions. */
export interface SequenceMaxima {
  readonly snapshotId: number;
  /** That snapshot's delta manifest list: tells a rollback (and a different snapshot of that id) apart. */
  readonly deltaManifestList: string;
  readonly partitions: ReadonlySet<string>;
  readonly max: Map<string, bigint>;
  /**
   * Buckets whose maximum a folded snapshot deleted without adding it back (a compaction whose
   * every record was dropped): their live maximum may be lower. Overlapping one of them, a commit
   * reads the live maxima before it re-sequences anything.
   */
  readonly uncertain: ReadonlySet<string>;
}

/** What one re-sequencing changed: which buckets, and the files it wrote and replaced. */
export interface ResequenceReport {
  /** `bucketKey` of every bucket whose new files were rewritten. */
  readonly buckets: ReadonlySet<string>;
}

/** `<bucket>|<partition hex>`: identifies one (partition, bucket). */
export function bucketKey(partition: Uint8Array, bucket: number): string {
  return `${bucket}|${partitionKey(partition)}`;
}

/**
 * After a committer created `created` on top of `base` with the delta `entries`: maxima known at
 * `base` become the maxima at `created` by raising them with the delta's ADD entries, exactly as
 * reading the new snapshot's delta would (so the next commit reads nothing for it).
 */
export function advanceSequenceMaxima(
  cache: { maxima: SequenceMaxima | null },
  base: Snapshot | null,
  created: Snapshot,
  entries: readonly ManifestEntry[],
): void {
  const known = cache.maxima;
  if (known === null || base === null || known.snapshotId !== base.id || known.deltaManifestList !== base.deltaManifestList) return;
  if (created.id !== base.id + 1) return;
  const max = new Map(known.max);
  const uncertain = new Set(known.uncertain);
  const delta = new DeltaFold(max, uncertain);
  for (const e of entries) if (known.partitions.has(partitionKey(e.partition))) delta.add(e);
  delta.finish();
  cache.maxima = { snapshotId: created.id, deltaManifestList: created.deltaManifestList, partitions: known.partitions, max, uncertain };
}

/**
 * Folds the entries of one snapshot's delta into maxima: ADD entries raise a bucket's maximum;
 * a bucket whose maximum only DELETE entries hold afterwards becomes uncertain, and one whose
 * maximum an ADD entry holds becomes certain again.
 */
class DeltaFold {
  private readonly added = new Map<string, bigint>();
  private readonly deleted = new Map<string, bigint>();
  constructor(
    private readonly max: Map<string, bigint>,
    private readonly uncertain: Set<string>,
  ) {}

  add(e: ManifestEntry): void {
    const key = bucketKey(e.partition, e.bucket);
    if (e.kind === 'ADD') {
      raise(this.max, key, e.file.maxSequenceNumber);
      raise(this.added, key, e.file.maxSequenceNumber);
    } else {
      raise(this.deleted, key, e.file.maxSequenceNumber);
    }
  }

  finish(): void {
    for (const [key, top] of this.added) if (top >= this.max.get(key)!) this.uncertain.delete(key);
    for (const [key, top] of this.deleted) {
      const max = this.max.get(key);
      if (max !== undefined && top >= max && (this.added.get(key) ?? -1n) < max) this.uncertain.add(key);
    }
  }
}

/**
 * Keeps the new files of one commit above every sequence number committed before it, bucket by
 * bucket (see the module comment). One guard serves one commit; the maxima it learns go to a cache
 * shared by the commits of one committer, so that a retry or the next commit only reads the delta
 * manifests of the snapshots committed since.
 */
export class SequenceOrderGuard {
  /** Every data file name this guard writes starts with this prefix (record it as in flight first). */
  readonly filePrefix: string;
  /** Locations of the files this guard wrote (rewritten new files), in order. */
  readonly written: string[] = [];
  /** Locations of new files that rewritten ones replaced (delete after the commit succeeded). */
  readonly superseded: string[] = [];
  /** Buckets re-sequenced so far. */
  readonly rewrittenBuckets = new Set<string>();
  private readonly snapshots: SnapshotManager;
  private readonly schemas: SchemaManager;
  private readonly compression: ParquetCompression;
  /** Original file name → the entry currently standing in for it. */
  private readonly current = new Map<string, ManifestEntry>();
  private counter = 0;
  /** Number of files rewritten (a file rewritten twice counts twice). */
  rewrites = 0;

  constructor(
    private readonly ctx: TableContext,
    /** Maxima learned by earlier commits of the same committer; kept up to date by this guard. */
    private readonly cache: { maxima: SequenceMaxima | null } = { maxima: null },
    /** Where manifest lists and manifests come from (the committer's cache holds its own). */
    private readonly source: ManifestSource = storageManifestSource(ctx.fileIO, ctx.paths),
  ) {
    this.filePrefix = `${ctx.options.dataFilePrefix}${randomUUID()}-`;
    this.compression = COMPRESSIONS[ctx.options.fileCompression] ?? 'zstd';
    this.snapshots = new SnapshotManager(ctx.fileIO, ctx.paths);
    this.schemas = new SchemaManager(ctx.fileIO, ctx.paths);
  }

  /** Whether commits to `schema` need the guard: primary-key tables only. */
  static appliesTo(schema: TableSchema): boolean {
    return schema.primaryKeys.length > 0;
  }

  /**
   * Returns `entries` with the ADD entries of every bucket that a file live in `latest` overlaps
   * replaced by re-sequenced copies (the same array when nothing had to change). Call once per
   * attempt, always with the commit's original entries.
   */
  async apply(latest: Snapshot | null, entries: readonly ManifestEntry[]): Promise<readonly ManifestEntry[]> {
    // Per bucket: (original entry, the entry currently standing in for it).
    const adds = new Map<string, Array<[ManifestEntry, ManifestEntry]>>();
    for (const e of entries) {
      if (e.kind !== 'ADD') continue;
      const key = bucketKey(e.partition, e.bucket);
      let list = adds.get(key);
      if (!list) adds.set(key, (list = []));
      list.push([e, this.current.get(e.file.fileName) ?? e]);
    }
    if (adds.size === 0 || latest === null) return this.substitute(entries);
    const partitions = new Set<string>();
    for (const list of adds.values()) partitions.add(partitionKey(list[0]![0].partition));
    let max = await this.maximaAt(latest, partitions);
    const ourMin = (list: Array<[ManifestEntry, ManifestEntry]>): bigint => {
      let min = list[0]![1].file.minSequenceNumber;
      for (const [, cur] of list) if (cur.file.minSequenceNumber < min) min = cur.file.minSequenceNumber;
      return min;
    };
    const overlaps = ([key, list]: [string, Array<[ManifestEntry, ManifestEntry]>]): boolean => {
      const bucketMax = max.get(key);
      return bucketMax !== undefined && ourMin(list) <= bucketMax;
    };
    // A compaction that dropped every record of a bucket's maximum leaves a lower live maximum, which
    // a fresh writer continues from: reading the live files is cheaper than a rewrite and a
    // compaction dropped and redone.
    const uncertain = this.cache.maxima?.uncertain;
    if (uncertain !== undefined && uncertain.size > 0 && [...adds].some((b) => overlaps(b) && uncertain.has(b[0]))) {
      max = await this.liveMaxima(latest, partitions);
    }
    for (const [key, list] of adds) {
      if (!overlaps([key, list])) continue;
      const bucketMax = max.get(key)!;
      // One shift for the whole bucket keeps the order among our own files.
      const shift = bucketMax + 1n - ourMin(list);
      for (const [original, cur] of list) this.current.set(original.file.fileName, await this.rewrite(cur, shift));
      this.rewrittenBuckets.add(key);
    }
    return this.substitute(entries);
  }

  private substitute(entries: readonly ManifestEntry[]): readonly ManifestEntry[] {
    if (this.current.size === 0) return entries;
    return entries.map((e) => (e.kind === 'ADD' ? (this.current.get(e.file.fileName) ?? e) : e));
  }

  /** Highest live sequence number per bucket of `partitions` at `latest`, read incrementally when possible. */
  private async maximaAt(latest: Snapshot, partitions: ReadonlySet<string>): Promise<Map<string, bigint>> {
    const cached = this.cache.maxima;
    let covered = cached !== null && cached.snapshotId <= latest.id && [...partitions].every((p) => cached.partitions.has(p));
    // The cached snapshot (still the one the maxima were taken at?) and every one after it up to
    // `latest`, read together: one round trip however many there are.
    let between: Array<Snapshot | null> = [];
    if (covered && cached!.snapshotId < latest.id) {
      const from = cached!.snapshotId;
      between = await Promise.all(
        Array.from({ length: latest.id - from }, (_, i) => (from + i === latest.id ? latest : this.snapshots.tryGet(from + i))),
      );
      const base = between.shift() ?? null;
      covered = base !== null && base.deltaManifestList === cached!.deltaManifestList;
      between.push(latest);
    } else if (covered) {
      covered = latest.deltaManifestList === cached!.deltaManifestList;
    }
    if (covered && cached !== null) {
      const max = new Map(cached.max);
      const uncertain = new Set(cached.uncertain);
      let complete = true;
      for (const s of between) {
        if (s === null) {
          complete = false;
          break;
        }
        // Only ADD entries raise a maximum; a file that a later snapshot deleted may still count,
        // which can only make a re-sequencing happen that was not strictly needed (see `uncertain`).
        const delta = new DeltaFold(max, uncertain);
        for (const m of await this.source.list(s.deltaManifestList)) {
          for await (const e of this.source.entries(m.fileName)) if (cached.partitions.has(partitionKey(e.partition))) delta.add(e);
        }
        delta.finish();
      }
      if (complete) {
        const { partitions: known } = cached;
        this.cache.maxima = { snapshotId: latest.id, deltaManifestList: latest.deltaManifestList, partitions: known, max, uncertain };
        return max;
      }
    }
    return this.liveMaxima(latest, partitions);
  }

  /** Highest live sequence number per bucket of `partitions` at `latest`, from its manifests. */
  private async liveMaxima(latest: Snapshot, partitions: ReadonlySet<string>): Promise<Map<string, bigint>> {
    const max = new Map<string, bigint>();
    const live = await liveEntries(this.ctx.fileIO, this.ctx.paths, latest, (p) => partitions.has(partitionKey(p)), this.source);
    for (const e of live.values()) raise(max, bucketKey(e.partition, e.bucket), e.file.maxSequenceNumber);
    this.cache.maxima = { snapshotId: latest.id, deltaManifestList: latest.deltaManifestList, partitions, max, uncertain: new Set() };
    return max;
  }

  /** Writes a copy of `entry`'s file with every `_SEQUENCE_NUMBER` increased by `shift`. */
  private async rewrite(entry: ManifestEntry, shift: bigint): Promise<ManifestEntry> {
    const f = entry.file;
    if (f.externalPath) {
      throw new CommitInputError(`cannot re-sequence new file '${f.fileName}': it lies at an external path (${f.externalPath})`);
    }
    const fileSchema = f.schemaId === this.ctx.schema.id ? this.ctx.schema : await this.schemas.schema(f.schemaId);
    const pk = trimmedPrimaryKeys(fileSchema).map((n) => fileSchema.fields.find((x) => x.name === n)!);
    const fields = keyValueFileFields(pk, fileSchema.fields);
    const source = this.ctx.paths.dataFilePath(entry.partition, entry.bucket, f.fileName);
    const batches: arrow.RecordBatch[] = [];
    for await (const raw of readParquetFile(this.ctx.fileIO, source, { fileSize: f.fileSize })) {
      batches.push(shiftSequence(conformToPaimonTypes(raw, fields), shift, source));
    }
    const bytes = await encodeParquetAsync(batches, { compression: this.compression, plainColumns: keyValuePlainColumns(pk) });
    const name = `${this.filePrefix}${this.counter++}${extension(f.fileName)}`;
    const target = this.ctx.paths.dataFilePath(entry.partition, entry.bucket, name);
    this.written.push(target);
    await this.ctx.fileIO.write(target, bytes);
    this.superseded.push(source);
    this.rewrites++;
    const file: DataFileMeta = {
      ...f,
      fileName: name,
      fileSize: bytes.byteLength,
      minSequenceNumber: f.minSequenceNumber + shift,
      maxSequenceNumber: f.maxSequenceNumber + shift,
    };
    return { ...entry, file };
  }

  /**
   * Files to delete after the snapshot holding `committed` exists: the superseded originals and
   * intermediate rewrites that `committed` does not reference.
   */
  obsoleteAfter(committed: readonly ManifestEntry[]): string[] {
    const used = new Set(committed.map((e) => e.file.fileName));
    return [...new Set([...this.superseded, ...this.written])].filter((p) => !used.has(p.slice(p.lastIndexOf('/') + 1)));
  }
}

function raise(max: Map<string, bigint>, key: string, value: bigint): void {
  const old = max.get(key);
  if (old === undefined || value > old) max.set(key, value);
}

/** `.parquet` of `data-….parquet` (and `.zstd.parquet` style suffixes). */
function extension(name: string): string {
  const m = /(\.[A-Za-z0-9]+)+$/.exec(name);
  return m ? m[0] : '.parquet';
}

function shiftSequence(batch: arrow.RecordBatch, shift: bigint, path: string): arrow.RecordBatch {
  const index = batch.schema.fields.findIndex((f) => f.name === SEQUENCE_NUMBER_FIELD_NAME);
  if (index < 0) {
    throw new CommitInputError(`cannot re-sequence ${path}: it has no ${SEQUENCE_NUMBER_FIELD_NAME} column (not a primary-key data file)`);
  }
  const data = batch.data.children[index]!;
  const values = data.values as BigInt64Array;
  const shifted = new BigInt64Array(batch.numRows);
  for (let i = 0; i < batch.numRows; i++) shifted[i] = values[data.offset + i]! + shift;
  const column = arrow.makeData({ type: new arrow.Int64(), length: batch.numRows, nullCount: 0, data: shifted });
  const children = batch.data.children.map((c, i) => (i === index ? column : c));
  const struct = arrow.makeData({ type: new arrow.Struct(batch.schema.fields), length: batch.numRows, nullCount: 0, children });
  return new arrow.RecordBatch(batch.schema, struct);
}
