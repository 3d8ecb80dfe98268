/**
 * Batch and incremental reads of a table: plan with {@link FileStoreScan}, read every split with
 * the reader its table kind needs, then apply the row filter (after merging), the projection and
 * the limit. Results are apache-arrow RecordBatches whose schema is the projected read schema
 * (`toArrowSchema` of the fields, with `PARQUET:field_id` metadata).
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import {
  sharedParquetWorkerPool,
  toArrowSchema,
  trimmedPrimaryKeys,
  type DataField,
  type ParquetWorkerPool,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import { TimeTravelError } from '../errors.js';
import { partitionOnly, predicateColumns, type Predicate } from '../predicate.js';
import { parsePredicate } from '../predicate-parser.js';
import type { SchemaManager } from '../schema-manager.js';
import type { SnapshotManager } from '../snapshot-manager.js';
import type { TablePaths } from '../table-paths.js';
import { withSchema, type TableContext } from '../table-context.js';
import type { TagManager } from '../tag-manager.js';
import { parseTimestampMillis, resolveSnapshot, type TimeTravelOptions } from '../time-travel.js';
import type { DataSplit } from '../scan/data-split.js';
import { ScanPlan } from '../scan/scan-plan.js';
import { InvalidReadOptionError } from '../scan/errors.js';
import { bucketSelector, fixedValues, fixesColumns, keyListByBucket } from '../scan/bucket-filter.js';
import { FileStoreScan, type ScanFilter } from '../scan/file-store-scan.js';
import { makeBatch, takeBatch } from './arrow-take.js';
import { mergeEngineOptions } from './merge-engine.js';
import { sharedReadCache } from './read-cache.js';
import { matchingRows } from './row-filter.js';
import { readMergeSplit, readRawSplits, type SplitReadContext } from './split-readers.js';
import { noticeSkippedLevel0 } from './dv-level0-notice.js';
import { FileIndexFilter, type FileIndexReadStats } from '../file-index/file-index-filter.js';

/** The parts of a table a read needs (a `Table` provides them). */
export interface ReadContext {
  /** Storage, options and path factory of the table's latest schema. */
  readonly context: TableContext;
  readonly fileIO: FileIO;
  readonly paths: TablePaths;
  readonly schemaManager: SchemaManager;
  readonly snapshotManager: SnapshotManager;
  readonly tagManager: TagManager;
}

/** Projection, filter and limit, shared by batch and incremental reads. */
export interface RowSelectionOptions {
  /** Columns to return, in this order (default: all columns in schema order). */
  readonly columns?: readonly string[];
  /**
   * Row filter: predicate text such as `"dt = '2024-05-01' AND id > 10"` (see `parsePredicate`)
   * or a {@link Predicate}. Applied to merged rows; also used to skip partitions and files.
   */
  readonly where?: string | Predicate;
  /** Return at most this many rows. */
  readonly limit?: number;
  /** Only this partition, as `column → value` strings as in partition directory names (`{ dt: '2024-05-01' }`). */
  readonly partition?: Readonly<Record<string, string>>;
  /** Only this bucket. */
  readonly bucket?: number;
  /** Target rows per batch for merged primary-key splits (default 65,536). */
  readonly batchSize?: number;
  /**
   * Parquet row groups decoded ahead of the consumer on the worker pool (default 4). It bounds the
   * read's memory: besides the batch being consumed, at most this many decoded row groups wait.
   */
  readonly readAhead?: number;
  /**
   * Where Parquet decoding runs: a `ParquetWorkerPool`, or `false` for the calling thread. Default:
   * the shared pool (`TIDEMARK_PARQUET_WORKERS` workers, else min(2, available parallelism)).
   */
  readonly decodePool?: ParquetWorkerPool | false;
}

/** Options of `Table.newRead`. At most one of `snapshotId`, `timestamp` and `tag`; none = latest. */
export interface ReadOptions extends RowSelectionOptions {
  /** Read this snapshot. */
  readonly snapshotId?: number;
  /**
   * Read the latest snapshot committed at or before this time: epoch milliseconds, an ISO-8601
   * string (no zone = UTC) or a Date.
   */
  readonly timestamp?: number | string | Date;
  /** Read the snapshot of this tag. */
  readonly tag?: string;
}

/** Options of `Table.newIncrementalRead`. */
export interface IncrementalReadOptions extends RowSelectionOptions {
  /** Exclusive lower bound: changes of snapshots after this one. */
  readonly fromSnapshotId: number;
  /** Inclusive upper bound (default: the latest snapshot). */
  readonly toSnapshotId?: number;
}

interface PreparedRead {
  readonly plan: ScanPlan;
  readonly schema: TableSchema;
  /** Output fields (projection). */
  readonly outputFields: readonly DataField[];
  /** Output fields plus predicate-only columns (output fields first). */
  readonly readFields: readonly DataField[];
  readonly predicate: Predicate | null;
  /** The part of the predicate that may skip row groups by their statistics. */
  readonly rowFilter: Predicate | null;
  /** The split readers drop every row the predicate rejects (it names key and partition columns only, applied before the merge). */
  readonly readsFiltered?: boolean;
  /** The filter fixes the whole primary key: decoded row groups are kept for the next lookup. */
  readonly keyLookup?: boolean;
  /** The filter fixes a single-column primary key to these values. */
  readonly keyProbe?: { readonly field: DataField; readonly values: readonly unknown[] };
  readSplits(ctx: SplitReadContext, splits: readonly DataSplit[]): AsyncGenerator<arrow.RecordBatch>;
}

/** Common driver of batch and incremental reads. */
abstract class AbstractRead {
  private prepared: Promise<PreparedRead> | null = null;

  /**
   * What data-file indexes saved this read so far (`file-index.bloom-filter.columns`): files
   * asked, files skipped, sidecar index files read. Counts grow as {@link batches} runs.
   */
  readonly fileIndexStats: FileIndexReadStats = { filesChecked: 0, filesSkipped: 0, sidecarReads: 0 };

  constructor(
    protected readonly table: ReadContext,
    protected readonly selection: RowSelectionOptions,
  ) {}

  protected abstract prepare(): Promise<PreparedRead>;

  private ready(): Promise<PreparedRead> {
    if (!this.prepared) this.prepared = this.prepare();
    return this.prepared;
  }

  /** The planned splits and files this read will process. */
  async plan(): Promise<ScanPlan> {
    return (await this.ready()).plan;
  }

  /** The Arrow schema of the result (projected fields with `PARQUET:field_id`). */
  async arrowSchema(): Promise<arrow.Schema> {
    return toArrowSchema((await this.ready()).outputFields);
  }

  /** The table schema version the read uses (the latest schema; with time travel, the read snapshot's). */
  async tableSchema(): Promise<TableSchema> {
    return (await this.ready()).schema;
  }

  /**
   * Streams the result rows as RecordBatches, in plan order (split by split, file by file, row
   * group by row group), while the next row groups are decoded on the worker pool (see
   * {@link RowSelectionOptions.readAhead}). No order is promised across splits beyond that.
   */
  async *batches(): AsyncGenerator<arrow.RecordBatch> {
    // Workers take ~0.1 s to load parquet-wasm: let that overlap planning.
    if (this.selection.decodePool !== false) (this.selection.decodePool ?? sharedParquetWorkerPool()).warm(Infinity);
    const p = await this.ready();
    const limit = this.selection.limit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
      throw new InvalidReadOptionError(`invalid limit ${limit}: expected a non-negative integer`);
    }
    if (limit === 0) return;
    const readAhead = this.selection.readAhead;
    if (readAhead !== undefined && (!Number.isInteger(readAhead) || readAhead < 1)) {
      throw new InvalidReadOptionError(`invalid readAhead ${readAhead}: expected a positive integer`);
    }
    const schemaManager = this.table.schemaManager;
    const schemaOf = (id: number): Promise<TableSchema> => (id === p.schema.id ? Promise.resolve(p.schema) : schemaManager.schema(id));
    const cache = sharedReadCache(this.table.context);
    const fileIndex =
      p.rowFilter !== null && this.table.context.options.fileIndexReadEnabled
        ? new FileIndexFilter(p.rowFilter, p.schema.fields, this.table.fileIO, schemaOf, cache, this.fileIndexStats)
        : null;
    const ctx: SplitReadContext = {
      fileIO: this.table.fileIO,
      schemaOf,
      readFields: p.readFields,
      ...(this.selection.batchSize !== undefined ? { batchSize: this.selection.batchSize } : {}),
      ...(readAhead !== undefined ? { readAhead } : {}),
      ...(this.selection.decodePool !== undefined ? { pool: this.selection.decodePool } : {}),
      rowFilter: p.rowFilter,
      cache,
      ...(fileIndex?.active === true ? { fileIndex } : {}),
      ...(p.keyLookup === true ? { keepDecoded: true } : {}),
      ...(p.keyProbe !== undefined ? { keyProbe: p.keyProbe } : {}),
    };
    const outSchema = toArrowSchema(p.outputFields);
    let remaining = limit ?? Infinity;
    for await (let batch of p.readSplits(ctx, p.plan.splits)) {
      if (p.predicate && p.readsFiltered !== true) batch = filterBatch(batch, p.predicate, p.readFields);
      if (batch.numRows === 0) continue;
      if (batch.numRows > remaining) batch = batch.slice(0, remaining);
      const columns = p.outputFields.map((_, i) => batch.data.children[i]!);
      yield makeBatch(outSchema, columns, batch.numRows);
      remaining -= batch.numRows;
      if (remaining <= 0) return;
    }
  }

  /** Reads everything into one Arrow Table (with the result schema even when empty). */
  async toArrowTable(): Promise<arrow.Table> {
    const batches: arrow.RecordBatch[] = [];
    for await (const b of this.batches()) batches.push(b);
    const schema = await this.arrowSchema();
    return batches.length === 0 ? new arrow.Table(schema) : new arrow.Table(batches);
  }

  /** Resolves projection and filter against `schema`. */
  protected selectFields(schema: TableSchema): Pick<PreparedRead, 'outputFields' | 'readFields' | 'predicate'> {
    const byName = new Map(schema.fields.map((f) => [f.name, f]));
    const outputFields = (this.selection.columns ?? schema.fields.map((f) => f.name)).map((name) => {
      const f = byName.get(name);
      if (!f) {
        throw new InvalidReadOptionError(
          `unknown column '${name}' in columns; the table (schema ${schema.id}) has: ${schema.fields.map((x) => x.name).join(', ')}`,
        );
      }
      return f;
    });
    if (new Set(outputFields.map((f) => f.id)).size !== outputFields.length) {
      throw new InvalidReadOptionError(`columns lists a column more than once: ${this.selection.columns?.join(', ')}`);
    }
    const where = this.selection.where;
    const predicate = where === undefined ? null : typeof where === 'string' ? parsePredicate(where, schema.fields) : where;
    const readFields = [...outputFields];
    if (predicate) {
      for (const c of predicateColumns(predicate)) {
        const f = byName.get(c);
        if (!f) throw new InvalidReadOptionError(`the filter names unknown column '${c}'`);
        if (!readFields.includes(f)) readFields.push(f);
      }
    }
    if (this.selection.partition) {
      for (const k of Object.keys(this.selection.partition)) {
        if (!schema.partitionKeys.includes(k)) {
          throw new InvalidReadOptionError(
            `'${k}' in partition is not a partition key; partition keys: ${schema.partitionKeys.join(', ') || '(none)'}`,
          );
        }
      }
    }
    return { outputFields, readFields, predicate };
  }

  protected scanFilter(schema: TableSchema, predicate: Predicate | null, statsSafe: boolean): ScanFilter {
    const pk = trimmedPrimaryKeys(schema);
    return {
      partitionPredicate: predicate ? partitionOnly(predicate, schema.partitionKeys) : null,
      // Merge-on-read: skipping a file by a non-key column could hide a newer version of a row
      // and resurrect an older one; key-only conjuncts are safe.
      statsPredicate: predicate ? (statsSafe ? predicate : partitionOnly(predicate, [...pk, ...schema.partitionKeys])) : null,
      ...(this.selection.partition ? { partitionSpec: this.selection.partition } : {}),
      ...(this.selection.bucket !== undefined ? { bucket: this.selection.bucket } : {}),
      bucketSelector: bucketSelector(schema, predicate),
    };
  }
}

/**
 * A batch read of one snapshot (latest, by id, by timestamp or by tag). Created by
 * `Table.newRead`; planning happens on the first call of `plan()`, `batches()` or
 * `toArrowTable()`. The read schema is the table's latest schema, or with time travel the read
 * snapshot's (as in Java), and each data file is read with its own schema and mapped by field id.
 *
 * Table kinds: append tables read every file (minus deletion vectors); primary-key tables merge
 * on read (deduplicate / first-row / partial-update / aggregation, ordered by `sequence.field`
 * when set), except deletion-vector tables, whose batch reads skip level-0 files and read the
 * other files minus their deletion vectors.
 */
export class TableRead extends AbstractRead {
  constructor(
    table: ReadContext,
    private readonly options: ReadOptions = {},
  ) {
    super(table, options);
  }

  /** The snapshot this read sees (null for a table without snapshots). */
  async snapshot(): Promise<Snapshot | null> {
    return resolveSnapshot({ snapshots: this.table.snapshotManager, tags: this.table.tagManager }, this.timeTravel());
  }

  private timeTravel(): TimeTravelOptions {
    const o = this.options;
    const t = o.timestamp;
    let timestampMs: number | undefined;
    if (t !== undefined) {
      if (t instanceof Date) timestampMs = t.getTime();
      else if (typeof t === 'number') timestampMs = t;
      else timestampMs = parseTimestampMillis(t);
    }
    return {
      ...(o.snapshotId !== undefined ? { snapshotId: o.snapshotId } : {}),
      ...(timestampMs !== undefined ? { timestampMs } : {}),
      ...(o.tag !== undefined ? { tag: o.tag } : {}),
    };
  }

  protected async prepare(): Promise<PreparedRead> {
    const cache = sharedReadCache(this.table.context);
    // Like Java: a read of the latest state uses the table's latest schema (so a column added by
    // ALTER is readable at once, as nulls); time travel reads with the snapshot's own schema.
    const travels = this.options.snapshotId !== undefined || this.options.timestamp !== undefined || this.options.tag !== undefined;
    let snapshot: Snapshot | null;
    let schema: TableSchema;
    if (travels) {
      snapshot = await this.snapshot();
      schema = snapshot ? await this.table.schemaManager.schema(snapshot.schemaId) : await this.table.schemaManager.latest();
    } else {
      // The newest snapshot and schema, each checked from the newest ids this table saw: one round trip.
      [snapshot, schema] = await Promise.all([
        cache.latestSnapshot(this.table.snapshotManager),
        cache.latestSchema(this.table.schemaManager),
      ]);
    }
    const selected = this.selectFields(schema);
    const isPk = schema.primaryKeys.length > 0;
    const ctx = withSchema(this.table.context, schema);
    const merge = isPk && !ctx.options.deletionVectorsEnabled ? mergeEngineOptions(schema) : null;
    const scan = new FileStoreScan(ctx, this.table.schemaManager, { cache });
    const filter = this.scanFilter(schema, selected.predicate, merge === null);
    const plan = await scan.plan(snapshot, filter);
    const keyFields = isPk ? trimmedPrimaryKeys(schema).map((n) => schema.fields.find((f) => f.name === n)!) : [];
    const sequenceFields = (merge?.sequenceFields ?? []).map((n) => schema.fields.find((f) => f.name === n)!);
    const groupFields = (merge?.sequenceGroups ?? [])
      .flatMap((g) => [...g.sequenceFields, ...g.fields])
      .map((n) => schema.fields.find((f) => f.name === n)!);
    return {
      ...selected,
      plan,
      schema,
      rowFilter: filter.statsPredicate ?? null,
      readsFiltered:
        merge !== null &&
        selected.predicate !== null &&
        [...predicateColumns(selected.predicate)].every((c) => trimmedPrimaryKeys(schema).includes(c) || schema.partitionKeys.includes(c)),
      keyLookup: isPk && fixesColumns(selected.predicate, trimmedPrimaryKeys(schema)),
      ...keyProbeOf(selected.predicate, keyFields, selected.readFields),
      readSplits: (splitCtx, splits) => {
        if (!isPk) return readRawSplits(splitCtx, splits, { keyValue: false, skipLevel0: false, applyDeletionVectors: true });
        if (merge === null) {
          // Said when rows are read, not when a writer or a compaction only plans.
          noticeSkippedLevel0(ctx, plan, travels);
          return readRawSplits(splitCtx, splits, { keyValue: true, skipLevel0: true, applyDeletionVectors: true });
        }
        const rowFilter = filter.statsPredicate ?? null;
        const byBucket = rowFilter === null || !(splitCtx.rowFilter === rowFilter) ? null : keyListByBucket(schema, rowFilter);
        return readMergeSplits(splitCtx, splits, byBucket, keyFields, merge, merge.engine === 'first-row', sequenceFields, groupFields);
      },
    };
  }
}

/**
 * The rows added by the snapshots in (`fromSnapshotId`, `toSnapshotId`]: the ADD entries of the
 * delta manifest lists of the APPEND snapshots in that range, read as-is. COMPACT snapshots only
 * rewrite existing rows and OVERWRITE snapshots replace data, so neither contributes rows.
 *
 * For append tables this is exactly the rows inserted in the range. For primary-key tables it is
 * the +I/+U records of the data files written in the range (-U/-D records are dropped), not merged
 * with each other nor with older data: a key updated twice in the range appears twice, and a
 * delete in the range is not visible. Use a changelog producer on the Java side for exact changes.
 * Deletion vectors are not applied.
 */
export class IncrementalRead extends AbstractRead {
  constructor(
    table: ReadContext,
    private readonly options: IncrementalReadOptions,
  ) {
    super(table, options);
  }

  protected async prepare(): Promise<PreparedRead> {
    const sm = this.table.snapshotManager;
    const from = this.options.fromSnapshotId;
    const to = this.options.toSnapshotId ?? (await sm.latestId());
    if (!Number.isSafeInteger(from) || from < 0) {
      throw new TimeTravelError(`invalid fromSnapshotId ${from}: expected a non-negative snapshot id`);
    }
    if (to === null) throw new TimeTravelError('the table has no snapshots to read incrementally');
    if (!Number.isSafeInteger(to) || to < from) {
      throw new TimeTravelError(`invalid incremental range (${from}, ${to}]: toSnapshotId must be >= fromSnapshotId`);
    }
    const toSnapshot = await sm.snapshot(to);
    const snapshots: Snapshot[] = [];
    for (let id = from + 1; id <= to; id++) {
      const s = id === to ? toSnapshot : await sm.snapshot(id);
      if (s.commitKind === 'APPEND') snapshots.push(s);
    }
    const schema = await this.table.schemaManager.schema(toSnapshot.schemaId);
    const selected = this.selectFields(schema);
    const isPk = schema.primaryKeys.length > 0;
    const scan = new FileStoreScan(withSchema(this.table.context, schema), this.table.schemaManager, {
      cache: sharedReadCache(this.table.context),
    });
    const filter = this.scanFilter(schema, selected.predicate, true);
    const plan = await scan.planDelta(snapshots, filter);
    return {
      ...selected,
      plan,
      schema,
      rowFilter: filter.statsPredicate ?? null,
      readSplits: (ctx, splits) => readRawSplits(ctx, splits, { keyValue: isPk, skipLevel0: false, applyDeletionVectors: false }),
    };
  }
}

/** The values a filter fixes a single-column primary key to, with the key's read field. */
function keyProbeOf(
  predicate: Predicate | null,
  keyFields: readonly DataField[],
  readFields: readonly DataField[],
): Pick<PreparedRead, 'keyProbe'> {
  if (predicate === null || keyFields.length !== 1) return {};
  const field = readFields.find((f) => f.id === keyFields[0]!.id);
  const values = fixedValues(predicate).get(keyFields[0]!.name);
  return field === undefined || values === undefined ? {} : { keyProbe: { field, values } };
}

/**
 * Merge-on-read of each split in turn (each bucket is merged in memory; its files decode in
 * parallel). A key list (`byBucket`) is cut down to the keys of each split's bucket: a bucket's
 * pages, row searches and row tests are for its own keys only.
 */
async function* readMergeSplits(
  ctx: SplitReadContext,
  splits: readonly DataSplit[],
  byBucket: ((bucket: number, totalBuckets: number) => Predicate) | null,
  ...rest: Parameters<typeof readMergeSplit> extends [SplitReadContext, DataSplit, ...infer R] ? R : never
): AsyncGenerator<arrow.RecordBatch> {
  for (const split of splits) {
    let splitCtx = ctx;
    if (byBucket !== null && split.totalBuckets > 0) {
      const rowFilter = byBucket(split.bucket, split.totalBuckets) as Extract<Predicate, { kind: 'in' }>;
      splitCtx = { ...ctx, rowFilter, ...(ctx.keyProbe ? { keyProbe: { field: ctx.keyProbe.field, values: rowFilter.values } } : {}) };
    }
    yield* readMergeSplit(splitCtx, split, ...rest);
  }
}

/** Keeps the rows of `batch` (columns = `fields`) for which `predicate` is TRUE. */
export function filterBatch(batch: arrow.RecordBatch, predicate: Predicate, fields: readonly DataField[]): arrow.RecordBatch {
  const keep = matchingRows(batch, fields, predicate);
  return keep === null ? batch : takeBatch(batch, keep);
}
