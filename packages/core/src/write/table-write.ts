/**
 * Batch writer of tables: validates input against the schema, routes rows to (partition, bucket)
 * buffers, and hands back {@link CommitMessage}s. Append tables roll Parquet data files at
 * `target-file-size`; primary-key tables go through one merge-tree writer per bucket
 * (key-value/merge-tree-writer.ts). Nothing becomes visible until the messages are committed.
 *
 * Orphan-file protection: all data files of one writer are named `<data-file.prefix><uuid>-<n>`
 * with one uuid per writer, and before its first file the writer records that prefix in
 * `inflight/write-<uuid>.json` (inflight.ts). Orphan cleanup never deletes a file matching a
 * recorded prefix, so files that exist before the snapshot referencing them are safe whatever the
 * cleanup's `olderThan`. {@link TableWrite.close} clears the record: close after the commit.
 */
import { randomUUID } from 'node:crypto';
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import {
  FILE_SOURCE_APPEND,
  INDEX_FILE_PREFIX,
  newDataFileMeta,
  bucketOfValues,
  trimmedPrimaryKeys,
  VALUE_KIND_FIELD_NAME,
  serializeBinaryRow,
  toArrowSchema,
  typeToString,
  deserializeBinaryRow,
  encodeParquetAsync,
  encodeParquetRowGroupsAsync,
  ipcSegmentSchema,
  ParquetRowGroupStream,
  sameIpcSchema,
  rowGroupCopyBlocker,
  sharedParquetWorkerPool,
  type DataFileMeta,
  type DataType,
  type IpcStreamSegment,
  type ParquetCompression,
  type SimpleStats,
  type TableSchema,
  type Value,
} from '@tidemark/format';
import type { CommitMessage } from '../commit-message.js';
import { NON_RETRACTABLE_FUNCTIONS } from '../read/aggregate-functions.js';
import {
  isRetraction,
  mergeEngineOptions,
  ROW_KIND_INSERT,
  ROW_KIND_UPDATE_BEFORE,
  type MergeEngineOptions,
} from '../read/merge-engine.js';
import { keyHashOf, type BucketAssigner } from './key-value/bucket-assigner.js';
import { primaryKeyBucketMode } from './bucket-mode.js';
import { DynamicBucketAssigner } from './dynamic-bucket-assigner.js';
import { MERGE_RECORD_OVERHEAD_BYTES, MergeTreeWriter, type CompactManager } from './key-value/merge-tree-writer.js';
import { parseRowKind } from './key-value/row-kind.js';
import type { CoreOptions } from '../core-options.js';
import { INFLIGHT_RECORD_REFRESH_MS, clearInflightFiles, recordInflightPrefixes } from '../inflight.js';
import type { FileStorePathFactory } from '../path-factory.js';
import { isTableContext, tableContext, type TableContext } from '../table-context.js';
import { buildColumn, conformData, dataByteSize, isValidAt, sameAsPreviousRow } from './arrow-columns.js';
import { takeRows } from '../read/arrow-take.js';
import { valueReader } from '../read/arrow-values.js';
import { ConversionFailure, toInternal, type WriteValue } from './value-conversion.js';
import { FileStatsCollector } from './value-stats.js';
import { creationTimeOf, parquetCompressionOf } from './file-format.js';
import { NotSupportedError, WriteValidationError } from './write-errors.js';
import { mapOrdered } from '../expire/bounded-map.js';
import type { CompactionReport } from '../compact/compact-manager.js';

/** A plain row: column name → JS value (see value-conversion.ts for the accepted forms). */
export type RowObject = Readonly<Record<string, unknown>>;

/** What {@link TableWrite.write} accepts. */
export type WriteInput = arrow.Table | arrow.RecordBatch | readonly RowObject[];

/** Options of {@link TableWrite} (and `Table.newBatchWrite`). */
export interface TableWriteOptions {
  /**
   * First sequence number of a (partition, bucket) — the max `_MAX_SEQUENCE_NUMBER` of its live
   * files + 1. Called once per bucket before its first file; defaults to 0 (append tables only need
   * increasing numbers within a commit).
   */
  readonly startSequence?: (partition: Uint8Array, bucket: number) => bigint | Promise<bigint>;
  /** Memory budget for buffered rows in bytes (default: option `write-buffer-size`). */
  readonly memoryBudget?: number;
  /** Clock for `_CREATION_TIME` (epoch millis); default `Date.now`. */
  readonly now?: () => number;
  /**
   * Record the writer's file-name prefix in `inflight/` before its first data file, so that orphan
   * cleanup running meanwhile cannot delete files not yet committed (default true). Disable only
   * where no cleanup can run concurrently (tests, benchmarks measuring raw write speed).
   */
  readonly recordInflight?: boolean;
  /** Receives best-effort failures (clearing the in-flight record); default `console.warn`. */
  readonly logger?: { warn(message: string): void };
  /**
   * Primary-key tables: the input field (row-object property or Arrow Utf8 column) holding each
   * row's kind, `+I`, `-U`, `+U` or `-D`; it is not a table column. Rows without it (or without
   * this option) are `+I` upserts.
   */
  readonly rowKindField?: string;
  /**
   * Primary-key tables with dynamic buckets (`bucket` = -1): chooses the bucket of each key
   * (default: a {@link DynamicBucketAssigner} on the latest snapshot's hash index). Fixed buckets
   * (`bucket` = N) hash the bucket key without it.
   */
  readonly bucketAssigner?: BucketAssigner;
  /**
   * The rows replace the partitions they land in (an overwrite): dynamic buckets are then assigned
   * from an empty hash index instead of the latest snapshot's.
   */
  readonly replacePartitions?: boolean;
  /** Primary-key tables: the compaction hook of each (partition, bucket) writer (default: none). */
  readonly compactManager?: (bucket: CompactManagerContext) => CompactManager;
  /**
   * Primary-key tables: told of each compaction the writer's buckets finished (their duration,
   * for metrics; `Table.newBatchWrite`'s default compaction). Must not throw.
   */
  readonly onCompaction?: (report: BucketCompactionReport) => void;
  /**
   * Append tables: maximum rows per Parquet row group (default 1,048,576). A data file is also cut
   * into one row group per pool worker while groups keep 131,072 rows or more; the row groups of a
   * file are encoded on the workers in parallel, and readers skip and decode them separately.
   */
  readonly rowGroupRows?: number;
  /**
   * Append tables: encode each data file's row groups while its rows still arrive, this many rows
   * per group. A full group goes to the worker pool at once, so the encoding overlaps whatever
   * produces the rows (a compaction decoding its inputs, say) instead of waiting until the file is
   * cut. Files still end at about `target-file-size`. Rows waiting for their group (fewer than this
   * many per partition and bucket) are held outside the memory budget, so it suits writers of a few
   * buckets. Default: off (a file's rows are buffered until it is cut, then its groups are encoded).
   */
  readonly streamRowGroupRows?: number;
  /**
   * Validate and route rows without buffering or writing anything: no data file, no in-flight
   * record, no worker. {@link TableWrite.routedRows} then tells how many rows went to each
   * partition, and `prepareCommit()` returns no message. For planning an overwrite
   * (`TableCommit.planOverwrite`).
   */
  readonly dryRun?: boolean;
}

/** A compaction of one (partition, bucket) that a writer finished; see {@link TableWriteOptions.onCompaction}. */
export interface BucketCompactionReport extends CompactionReport {
  readonly partition: Uint8Array;
  readonly bucket: number;
}

/** What a {@link TableWriteOptions.compactManager} factory learns about the bucket it serves. */
export interface CompactManagerContext {
  /** The table (storage, schema the writer writes with, options, paths). */
  readonly table: TableContext;
  /** The table's merge engine settings. */
  readonly merge: MergeEngineOptions;
  readonly partition: Uint8Array;
  readonly bucket: number;
  /** Full path of a data file of the bucket from its name. */
  readonly pathOf: (fileName: string) => string;
  /** A fresh data file name of the writer (same in-flight prefix as its other files). */
  readonly newFileName: () => string;
  /** Awaited before each data file is written (keeps the in-flight record current). */
  readonly beforeFile: () => Promise<void>;
  /**
   * Writes an index file of the writer (`index-<writer uuid>-<n>`, covered by its in-flight
   * record) under `index/`; returns its name. Deletion-vector tables write their vectors with it.
   */
  readonly writeIndexFile: (bytes: Uint8Array) => Promise<string>;
  /** A fresh changelog file name of the writer (compaction changelog of `lookup` / `full-compaction`). */
  readonly newChangelogFileName: () => string;
}

interface BucketBuffer {
  readonly key: string;
  readonly partition: Uint8Array;
  readonly partitionDir: string;
  readonly bucket: number;
  batches: arrow.RecordBatch[];
  bytes: number;
  nextSequence: bigint | undefined;
  newFiles: DataFileMeta[];
  /** Primary-key tables: the bucket's merge-tree writer (holds the buffered rows instead of `batches`). */
  readonly mergeTree?: MergeTreeWriter;
  /** With `streamRowGroupRows`: the data file whose row groups are being encoded. */
  open?: OpenFile;
  /** The upload of the bucket's last file (its files are uploaded one after another, in order). */
  uploading?: Promise<void>;
}

/** A data file being encoded group by group (`streamRowGroupRows`). */
interface OpenFile {
  readonly stream: ParquetRowGroupStream;
  readonly stats: FileStatsCollector;
  rows: number;
  /** Arrow bytes of its rows: the size estimate against `target-file-size`. */
  arrowBytes: number;
}

/** A data file whose row groups {@link TableWrite.writeRowGroupsOf} copies: its bytes and manifest fields. */
export interface RowGroupSource {
  readonly bytes: Uint8Array;
  readonly rowCount: number;
  readonly valueStats: SimpleStats;
  readonly valueStatsCols: readonly string[] | null;
}

/** Rows of one batch that go to one (partition, bucket). */
interface RouteGroup {
  readonly part: Value[];
  readonly bucket: number;
  /** Row count (filled in for the gather path only). */
  rows: number;
}

/**
 * Writes rows of a table into new data files. Use one instance per batch of work: `write()` any
 * number of times, then `prepareCommit()`. On primary-key tables rows are upserts (or carry a row
 * kind, see {@link TableWriteOptions.rowKindField}), written by one merge-tree writer per
 * (partition, bucket).
 */
export class TableWrite {
  private readonly options: CoreOptions;
  private readonly paths: FileStorePathFactory;
  private readonly context: TableContext;
  readonly fileIO: FileIO;
  /** Table root location. */
  readonly location: string;
  readonly schema: TableSchema;
  private readonly writeOptions: TableWriteOptions;
  private readonly arrowSchema: arrow.Schema;
  /** Schema of routed batches: the table columns, plus `_VALUE_KIND` (Int8) on primary-key tables. */
  private readonly batchSchema: arrow.Schema;
  private readonly isPk: boolean;
  private readonly merge: MergeEngineOptions | null;
  /** Dynamic buckets: the assigner, fed the hash of the trimmed primary key. */
  private readonly assigner: BucketAssigner | null;
  private readonly partitionIdx: number[];
  private readonly partitionTypes: DataType[];
  private readonly bucketKeyIdx: number[];
  private readonly bucketKeyTypes: DataType[];
  private readonly numBuckets: number;
  private readonly totalBuckets: number;
  private readonly compression: ParquetCompression;
  private readonly budget: number;
  private readonly buffers = new Map<string, BucketBuffer>();
  /** Dry runs: rows per partition (by {@link partKey}). */
  private readonly routed = new Map<string, { partition: Uint8Array; rows: number }>();
  private buffered = 0;
  /** Written Parquet bytes / Arrow bytes so far; starts pessimistic (1) so files stay below target. */
  private ratioNum = 1;
  private ratioDen = 1;
  /** Data file uploads in flight (they never reject: a failure is kept in `failure`), with their estimated bytes. */
  private readonly uploads = new Map<Promise<void>, number>();
  private failure: unknown;
  private closed = false;
  /** One uuid per writer: every data file name starts with {@link filePrefix}. */
  private readonly uuid = randomUUID();
  private fileCounter = 0;
  private indexFileCounter = 0;
  /** When the in-flight record was (re)written, epoch millis; null while there is none. */
  private recordedAt: number | null = null;
  /** prepareCommit handed out files whose commit this writer cannot see. */
  private handedOut = false;
  /** An empty Parquet file as this writer encodes it: the reference of {@link rowGroupCopyBlocker}. */
  private emptyFile: Promise<Uint8Array> | undefined;

  /** A writer for the table of `context` (e.g. `table.context`). */
  constructor(context: TableContext, writeOptions?: TableWriteOptions);
  /** Shorthand: the context is built from the storage, root and schema. */
  constructor(fileIO: FileIO, location: string, schema: TableSchema, writeOptions?: TableWriteOptions);
  constructor(first: TableContext | FileIO, second?: TableWriteOptions | string, third?: TableSchema, fourth: TableWriteOptions = {}) {
    const ctx = isTableContext(first) ? first : tableContext(first, second as string, third!);
    const writeOptions = (isTableContext(first) ? (second as TableWriteOptions | undefined) : fourth) ?? {};
    for (const name of ['rowGroupRows', 'streamRowGroupRows'] as const) {
      const rows = writeOptions[name];
      if (rows !== undefined && (!Number.isInteger(rows) || rows <= 0)) {
        throw new WriteValidationError(undefined, undefined, `TableWriteOptions.${name} must be a positive integer, got ${rows}`);
      }
    }
    this.context = ctx;
    this.fileIO = ctx.fileIO;
    this.location = ctx.location;
    this.schema = ctx.schema;
    this.writeOptions = writeOptions;
    const schema = ctx.schema;
    this.isPk = schema.primaryKeys.length > 0;
    this.options = ctx.options;
    this.compression = parquetCompressionOf(this.options);
    if (this.options.bucket === -2) throw new NotSupportedError("writing tables with 'bucket' = -2 (postpone) is not supported yet");
    this.paths = ctx.paths;
    this.arrowSchema = toArrowSchema(schema.fields);
    const indexOf = (name: string): number => schema.fields.findIndex((f) => f.name === name);
    this.partitionIdx = schema.partitionKeys.map(indexOf);
    this.partitionTypes = this.partitionIdx.map((i) => schema.fields[i]!.type);
    this.numBuckets = this.options.bucket;
    this.totalBuckets = this.numBuckets > 0 ? this.numBuckets : -1;
    this.assigner = null;
    this.merge = null;
    const rowKindField = writeOptions.rowKindField;
    if (rowKindField !== undefined && schema.fields.some((f) => f.name === rowKindField)) {
      throw new WriteValidationError(rowKindField, undefined, 'the row kind field must not be a table column');
    }
    let bucketKey = this.options.bucketKey;
    if (this.isPk) {
      const missing = schema.partitionKeys.filter((k) => !schema.primaryKeys.includes(k));
      if (missing.length > 0) {
        throw new NotSupportedError(
          `cross-partition updates are not supported: the primary key (${schema.primaryKeys.join(', ')}) does not contain the partition key(s) ${missing.join(', ')}`,
        );
      }
      this.merge = mergeEngineOptions(schema);
      const trimmed = trimmedPrimaryKeys(schema);
      if (this.numBuckets === -1) {
        primaryKeyBucketMode(schema);
        // A dry run routes rows to partitions only: no bucket index is read.
        this.assigner = writeOptions.dryRun
          ? null
          : (writeOptions.bucketAssigner ?? DynamicBucketAssigner.forTable(ctx, 'latest', writeOptions.replacePartitions ?? false));
        bucketKey = trimmed;
      } else {
        if (bucketKey.length === 0) bucketKey = trimmed;
        const outside = bucketKey.filter((k) => !schema.primaryKeys.includes(k));
        if (outside.length > 0) {
          throw new WriteValidationError(
            undefined,
            undefined,
            `option 'bucket-key' of a primary-key table must be part of the primary key (${outside.join(', ')} is not)`,
          );
        }
      }
    } else if (rowKindField !== undefined) {
      throw new NotSupportedError(
        `row kinds ('rowKindField' = '${rowKindField}') apply to primary-key tables only; append tables take inserts`,
      );
    }
    this.batchSchema = this.isPk
      ? new arrow.Schema([...this.arrowSchema.fields, new arrow.Field(VALUE_KIND_FIELD_NAME, new arrow.Int8(), false)])
      : this.arrowSchema;
    this.bucketKeyIdx = this.numBuckets > 0 || this.assigner ? bucketKey.map(indexOf) : [];
    if (this.bucketKeyIdx.some((i) => i < 0)) {
      throw new WriteValidationError(undefined, undefined, `option 'bucket-key' names a column that is not in the schema`);
    }
    if (this.numBuckets > 0 && this.bucketKeyIdx.length === 0) {
      throw new WriteValidationError(undefined, undefined, `append table with 'bucket' = ${this.numBuckets} has no 'bucket-key'`);
    }
    this.bucketKeyTypes = this.bucketKeyIdx.map((i) => schema.fields[i]!.type);
    this.budget = writeOptions.memoryBudget ?? this.options.writeBufferSize;
  }

  /**
   * Validates and buffers rows. Either all of `input` is accepted or none of it (validation runs
   * before anything is buffered or written). May write data files when buffers reach
   * `target-file-size` or the memory budget.
   *
   * @throws WriteValidationError naming the column and row index.
   */
  async write(input: WriteInput): Promise<void> {
    this.checkOpen();
    // Start a Parquet encode worker now, so its wasm instantiation overlaps building the first file.
    if (!this.writeOptions.dryRun) sharedParquetWorkerPool().warm(1);
    const batches =
      input instanceof arrow.Table
        ? input.batches.map((b) => this.conformBatch(b))
        : input instanceof arrow.RecordBatch
          ? [this.conformBatch(input)]
          : [this.rowsToBatch(input)];
    if (this.writeOptions.dryRun) {
      for (const batch of batches) this.countRouted(batch);
      return;
    }
    const groups: Array<[Value[], number, arrow.RecordBatch]> = [];
    for (const batch of batches) groups.push(...(await this.split(batch)));
    for (const [partValues, bucket, batch] of groups) this.buffer(partValues, bucket, batch);
    await this.flushIfNeeded();
  }

  /**
   * Writes all buffered rows and returns one message per (partition, bucket) with the files created
   * since the last call. Nothing is visible until the messages are committed.
   */
  async prepareCommit(): Promise<CommitMessage[]> {
    this.checkOpen();
    if (this.isPk) return this.prepareCommitKeyValue();
    for (const buf of this.buffers.values()) {
      if (this.streaming) {
        await this.streamBuffered(buf);
        if (buf.open) await this.closeOpenFile(buf);
      } else if (buf.batches.length > 0) await this.flush(buf);
    }
    await this.drain();
    const messages: CommitMessage[] = [];
    for (const buf of this.buffers.values()) {
      if (buf.newFiles.length === 0) continue;
      messages.push({ partition: buf.partition, bucket: buf.bucket, totalBuckets: this.totalBuckets, newFiles: buf.newFiles });
      buf.newFiles = [];
    }
    if (messages.length > 0) this.handedOut = true;
    return messages;
  }

  private async prepareCommitKeyValue(): Promise<CommitMessage[]> {
    let messages: CommitMessage[] = [];
    // Buckets flush together: a small write to several buckets uploads their files in one round
    // trip, not one per bucket.
    const prepared = mapOrdered(this.buffers.values(), MAX_UPLOADS, async (buf) => {
      this.buffered -= buf.bytes;
      buf.bytes = 0;
      return { buf, c: await this.guard(buf.mergeTree!.prepareCommit()) };
    });
    for await (const { buf, c } of prepared) {
      const compactChangelog = c.compactChangelog ?? [];
      const empty = c.newFiles.length === 0 && c.newChangelogFiles.length === 0 && compactChangelog.length === 0;
      const indexChanges = (c.newIndexFiles?.length ?? 0) + (c.deletedIndexFiles?.length ?? 0);
      if (empty && c.compactBefore.length === 0 && c.compactAfter.length === 0 && indexChanges === 0) continue;
      messages.push({
        partition: buf.partition,
        bucket: buf.bucket,
        totalBuckets: this.totalBuckets,
        newFiles: c.newFiles,
        ...(c.newChangelogFiles.length > 0 ? { newChangelogFiles: c.newChangelogFiles } : {}),
        ...(c.compactBefore.length > 0 ? { compactBefore: c.compactBefore } : {}),
        ...(c.compactAfter.length > 0 ? { compactAfter: c.compactAfter } : {}),
        ...(c.newIndexFiles !== undefined && c.newIndexFiles.length > 0 ? { compactNewIndexFiles: c.newIndexFiles } : {}),
        ...(c.deletedIndexFiles !== undefined && c.deletedIndexFiles.length > 0 ? { compactDeletedIndexFiles: c.deletedIndexFiles } : {}),
        ...(compactChangelog.length > 0 ? { compactChangelogFiles: compactChangelog } : {}),
      });
    }
    if (this.assigner?.prepareCommit) {
      // Index files are covered by the writer's in-flight record like its data files.
      if (messages.length > 0) await this.ensureRecorded();
      messages = await this.assigner.prepareCommit(messages);
    }
    if (messages.length > 0) this.handedOut = true;
    return messages;
  }

  /** A failure while rows are out of the buffers leaves the writer unusable (its rows are gone). */
  private async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (e) {
      this.failure = e;
      throw e;
    }
  }

  /** Name prefix of every data file of this writer (`<data-file.prefix><uuid>-`). */
  get filePrefix(): string {
    return `${this.options.dataFilePrefix}${this.uuid}-`;
  }

  /** Name prefix of the index files this writer writes itself (deletion vectors): `index-<uuid>-`. */
  get indexFilePrefix(): string {
    return `${INDEX_FILE_PREFIX}${this.uuid}-`;
  }

  /** Name prefix of every changelog file of this writer (`<changelog-file.prefix><uuid>-`). */
  get changelogFilePrefix(): string {
    return `${this.options.changelogFilePrefix}${this.uuid}-`;
  }

  /** Id of this writer's in-flight record (`inflight/<id>.json`). */
  get inflightRecordId(): string {
    return `write-${this.uuid}`;
  }

  /**
   * Id of this writer's in-flight record while it exists (null before the first data file, and
   * when the writer records none). A commit of the writer's files may clear it with its own once
   * the snapshot exists (`CommitCallOptions.clearsRecords`); call {@link recordCleared} then.
   */
  get recordId(): string | null {
    return this.recordedAt === null ? null : this.inflightRecordId;
  }

  /**
   * The commit of this writer's files cleared its in-flight record: {@link close} leaves it alone,
   * and a file written afterwards records it again.
   */
  recordCleared(): void {
    this.recordedAt = null;
  }

  /**
   * Deletes the files written since the last {@link prepareCommit} and discards buffered rows.
   * Clears the in-flight record too unless earlier `prepareCommit` calls handed out files (their
   * commit may still be pending; {@link close} clears it then).
   */
  async abort(): Promise<void> {
    await this.uploaded();
    await this.dropOpenFiles();
    const paths: string[] = [];
    for (const buf of this.buffers.values()) {
      if (buf.mergeTree) await buf.mergeTree.abort();
      for (const f of buf.newFiles) paths.push(this.paths.dataFilePath(buf.partitionDir, buf.bucket, f.fileName));
      buf.newFiles = [];
      buf.batches = [];
      buf.bytes = 0;
    }
    this.buffered = 0;
    await this.fileIO.deleteMany(paths);
    if (!this.handedOut) await this.assigner?.abort?.();
    if (!this.handedOut) await this.clearRecord();
  }

  /**
   * Deletes the data files of `messages` (returned by this writer's {@link prepareCommit}) after
   * their commit was refused, so a failed command leaves no file behind. Call it only when no
   * snapshot can reference them: after a {@link commitNotApplied} error, never after an error
   * whose outcome is unknown. Files this writer did not write are left alone.
   */
  async discard(messages: readonly CommitMessage[]): Promise<void> {
    const dirs = new Map<string, string>();
    for (const buf of this.buffers.values()) dirs.set(`${buf.bucket}|${bytesKey(buf.partition)}`, buf.partitionDir);
    const paths: string[] = [];
    for (const m of messages) {
      const dir = dirs.get(`${m.bucket}|${bytesKey(m.partition)}`);
      if (dir === undefined) continue;
      for (const f of m.newFiles)
        if (f.fileName.startsWith(this.filePrefix)) paths.push(this.paths.dataFilePath(dir, m.bucket, f.fileName));
      for (const f of [...(m.newChangelogFiles ?? []), ...(m.compactChangelogFiles ?? [])]) {
        if (f.fileName.startsWith(this.changelogFilePrefix)) paths.push(this.paths.changelogFilePath(dir, m.bucket, f.fileName));
      }
    }
    const indexPrefixes = [...(this.assigner?.inflightPrefixes?.() ?? []), this.indexFilePrefix];
    for (const m of messages) {
      for (const f of [...(m.newIndexFiles ?? []), ...(m.compactNewIndexFiles ?? [])]) {
        if (indexPrefixes.some((p) => f.fileName.startsWith(p))) paths.push(this.paths.indexFilePath(f.fileName, f.externalPath));
      }
    }
    await this.fileIO.deleteMany(paths);
  }

  /**
   * Discards buffered rows and clears the writer's in-flight record; the writer cannot be used
   * afterwards. Does not delete written files. Call it only after the messages of
   * {@link prepareCommit} were committed (or given up): closing earlier leaves their files
   * unprotected against a concurrent orphan cleanup until the snapshot lands. A failure to clear
   * the record is logged, not thrown (orphan cleanup prunes records older than 7 days).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.uploaded();
    await this.dropOpenFiles();
    this.buffers.clear();
    await this.clearRecord();
  }

  /** Writes (or refreshes, when a day old) the in-flight record before a data file is written. */
  private ensureRecorded(): Promise<void> {
    if (this.writeOptions.recordInflight === false) return Promise.resolve();
    const now = Date.now();
    if (this.recordedAt !== null && now - this.recordedAt < INFLIGHT_RECORD_REFRESH_MS) return Promise.resolve();
    // Callers that start it early (with a bucket's sequence planning) and the file write that
    // needs it share one write.
    this.recording ??= this.writeRecord(now).finally(() => {
      this.recording = null;
    });
    return this.recording;
  }

  private recording: Promise<void> | null = null;

  /**
   * The first sequence number of a bucket, planned while the in-flight record is written: both
   * come before the bucket's first file and neither needs the other, so they share a round trip.
   * A failed record is reported by the file write that awaits it.
   */
  private async startSequenceOf(partition: Uint8Array, bucket: number): Promise<bigint> {
    const start = this.writeOptions.startSequence;
    if (start === undefined) return 0n;
    this.ensureRecorded().catch(() => undefined);
    return BigInt(await start(partition, bucket));
  }

  private async writeRecord(now: number): Promise<void> {
    const changelog = this.options.changelogProducer !== 'none' ? [this.changelogFilePrefix] : [];
    const dv = this.options.deletionVectorsEnabled ? [this.indexFilePrefix] : [];
    const prefixes = [this.filePrefix, ...changelog, ...dv, ...(this.assigner?.inflightPrefixes?.() ?? [])];
    await recordInflightPrefixes(this.fileIO, this.location, this.inflightRecordId, prefixes, { now: () => now });
    this.recordedAt = now;
  }

  private async clearRecord(): Promise<void> {
    if (this.recordedAt === null) return;
    try {
      await clearInflightFiles(this.fileIO, this.location, this.inflightRecordId);
      this.recordedAt = null;
    } catch (e) {
      const message = `clearing in-flight record ${this.inflightRecordId} of ${this.location} failed (orphan cleanup removes it after 7 days): ${(e as Error)?.message ?? String(e)}`;
      if (this.writeOptions.logger) this.writeOptions.logger.warn(message);
      else console.warn(`[tidemark] ${message}`);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new NotSupportedError('this TableWrite is closed');
    if (this.failure !== undefined) throw this.failure;
  }

  // ---- input conversion -------------------------------------------------------------------

  private rowsToBatch(rows: readonly RowObject[]): arrow.RecordBatch {
    if (!Array.isArray(rows)) {
      throw new WriteValidationError(
        undefined,
        undefined,
        'write() expects an apache-arrow Table or RecordBatch, or an array of row objects',
      );
    }
    const fields = this.schema.fields;
    const names = new Set(fields.map((f) => f.name));
    const kindField = this.writeOptions.rowKindField;
    const kinds = this.isPk ? new Int8Array(rows.length) : null;
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      if (row === null || typeof row !== 'object' || Array.isArray(row)) {
        throw new WriteValidationError(
          undefined,
          r,
          `expected a row object { column: value }, got ${row === null ? 'null' : Array.isArray(row) ? 'an array' : typeof row}`,
        );
      }
      for (const k in row) {
        if (!names.has(k) && k !== kindField)
          throw new WriteValidationError(k, r, `unknown column (table columns: ${fields.map((f) => f.name).join(', ')})`);
      }
      if (kinds !== null && kindField !== undefined) {
        const raw = row[kindField];
        kinds[r] = raw === undefined || raw === null ? ROW_KIND_INSERT : parseRowKind(raw as string, r, kindField);
      }
    }
    if (kinds !== null) this.checkKinds(kinds);
    const children = fields.map((field) => {
      const values = new Array<WriteValue>(rows.length);
      const type = field.type;
      for (let r = 0; r < rows.length; r++) {
        const raw = rows[r]![field.name];
        let v: WriteValue;
        try {
          v = toInternal(type, raw);
        } catch (e) {
          if (e instanceof ConversionFailure) {
            throw new WriteValidationError(
              e.subPath ? `${field.name}${e.subPath.startsWith('[') ? '' : '.'}${e.subPath}` : field.name,
              r,
              e.message,
            );
          }
          throw e;
        }
        if (v === null && !type.nullable) throw new WriteValidationError(field.name, r, 'NULL in a NOT NULL column');
        values[r] = v;
      }
      return buildColumn(type, values);
    });
    if (kinds !== null) children.push(arrow.makeData({ type: new arrow.Int8(), length: rows.length, nullCount: 0, data: kinds }));
    return this.makeBatch(children, rows.length);
  }

  /**
   * Refuses retractions the table's merge engine cannot merge, before anything is buffered (Java
   * fails later, while merging).
   */
  private checkKinds(kinds: Int8Array): void {
    const m = this.merge!;
    if (m.ignoreDelete) return;
    const first = kinds.findIndex((k) => isRetraction(k));
    if (first < 0) return;
    const field = this.writeOptions.rowKindField;
    if (m.engine === 'first-row') {
      throw new WriteValidationError(
        field,
        first,
        "merge engine first-row cannot take -U/-D rows; set 'ignore-delete' = 'true' to drop them",
      );
    }
    if (m.engine === 'partial-update' && !m.removeRecordOnDelete && !m.sequenceGroups) {
      throw new WriteValidationError(
        field,
        first,
        "merge engine partial-update cannot take -U/-D rows; set 'ignore-delete', 'partial-update.remove-record-on-delete' or sequence groups",
      );
    }
    if (m.engine === 'aggregation') {
      // Such a record would make every later merge of its key fail (reads included).
      const retracting = m.removeRecordOnDelete ? kinds.findIndex((k) => k === ROW_KIND_UPDATE_BEFORE) : first;
      if (retracting < 0) return;
      for (const spec of m.aggregations?.values() ?? []) {
        if (NON_RETRACTABLE_FUNCTIONS.has(spec.fn) && !spec.ignoreRetract) {
          throw new WriteValidationError(
            field,
            retracting,
            `aggregate function '${spec.fn}' of column '${spec.field}' cannot retract -U/-D rows; set 'fields.${spec.field}.ignore-retract' = 'true'` +
              (m.removeRecordOnDelete ? '' : " or, for -D, 'aggregation.remove-record-on-delete' = 'true'"),
          );
        }
      }
    }
  }

  private conformBatch(batch: arrow.RecordBatch): arrow.RecordBatch {
    const byName = new Map<string, number>();
    batch.schema.fields.forEach((f, i) => byName.set(f.name, i));
    const kindField = this.writeOptions.rowKindField;
    for (const f of batch.schema.fields) {
      if (f.name === kindField) continue;
      if (!this.schema.fields.some((x) => x.name === f.name)) {
        throw new WriteValidationError(
          f.name,
          undefined,
          `unknown column (table columns: ${this.schema.fields.map((x) => x.name).join(', ')})`,
        );
      }
    }
    const children = this.schema.fields.map((field, c) => {
      const target = this.arrowSchema.fields[c]!.type;
      const i = byName.get(field.name);
      if (i === undefined) {
        if (!field.type.nullable) throw new WriteValidationError(field.name, undefined, 'missing NOT NULL column');
        return buildColumn(field.type, new Array<WriteValue>(batch.numRows).fill(null));
      }
      const src = batch.data.children[i]!;
      let data: arrow.Data;
      try {
        data = conformData(src, target);
      } catch (e) {
        throw new WriteValidationError(
          field.name,
          undefined,
          `cannot write Arrow ${String(src.type)} as ${typeToString(field.type)}: ${(e as Error).message}`,
        );
      }
      if (!field.type.nullable && data.nullCount > 0) {
        let r = 0;
        while (r < data.length && isValidAt(data, r)) r++;
        throw new WriteValidationError(field.name, r, 'NULL in a NOT NULL column');
      }
      return data;
    });
    if (this.isPk) children.push(this.kindsOfBatch(batch, kindField === undefined ? undefined : byName.get(kindField)));
    return this.makeBatch(children, batch.numRows);
  }

  /** The `_VALUE_KIND` column of an Arrow input: parsed from its row kind column, else all `+I`. */
  private kindsOfBatch(batch: arrow.RecordBatch, column: number | undefined): arrow.Data {
    const n = batch.numRows;
    const kinds = new Int8Array(n);
    if (column !== undefined) {
      const field = this.writeOptions.rowKindField!;
      const data = batch.data.children[column]!;
      const utf8 = (t: arrow.DataType): boolean => arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t);
      if (!utf8(data.type) && !(arrow.DataType.isDictionary(data.type) && utf8(data.type.dictionary))) {
        throw new WriteValidationError(
          field,
          undefined,
          `the row kind column must be Utf8 ('+I', '-U', '+U', '-D'), got Arrow ${String(data.type)}`,
        );
      }
      const vector = batch.getChildAt(column)!;
      for (let r = 0; r < n; r++) {
        const v = vector.get(r) as string | null;
        kinds[r] = v === null ? ROW_KIND_INSERT : parseRowKind(v, r, field);
      }
      this.checkKinds(kinds);
    }
    return arrow.makeData({ type: new arrow.Int8(), length: n, nullCount: 0, data: kinds });
  }

  private makeBatch(children: arrow.Data[], length: number): arrow.RecordBatch {
    const data = arrow.makeData({ type: new arrow.Struct(this.batchSchema.fields), length, nullCount: 0, children });
    return new arrow.RecordBatch(this.batchSchema, data);
  }

  // ---- routing ----------------------------------------------------------------------------

  /**
   * Splits a batch by (partition, bucket): zero-copy slices for sorted runs, a gather otherwise.
   * A row whose partition and bucket-key columns hold the same raw values as the previous row joins
   * the previous row's run without decoding anything, so sorted input costs O(runs), not O(rows).
   */
  private async split(batch: arrow.RecordBatch): Promise<Array<[Value[], number, arrow.RecordBatch]>> {
    const n = batch.numRows;
    if (this.partitionIdx.length === 0 && this.numBuckets <= 0 && !this.assigner) return n === 0 ? [] : [[[], 0, batch]];
    const cols = batch.data.children;
    const same = [
      ...this.partitionIdx.map((c, k) => sameAsPreviousRow(cols[c]!, this.partitionTypes[k]!)),
      ...this.bucketKeyIdx.map((c, k) => sameAsPreviousRow(cols[c]!, this.bucketKeyTypes[k]!)),
    ];
    const partValues = this.partitionIdx.map((c, k) => valueReader(cols[c]!, this.partitionTypes[k]!));
    const bucketKeyValues = this.bucketKeyIdx.map((c, k) => valueReader(cols[c]!, this.bucketKeyTypes[k]!));
    const groups = new Map<string, RouteGroup>();
    /** Run r covers rows [runStarts[r], runStarts[r + 1]) and goes to runGroups[r]. */
    const runStarts: number[] = [];
    const runGroups: RouteGroup[] = [];
    for (let r = 0; r < n; r++) {
      if (r > 0) {
        let k = 0;
        while (k < same.length && same[k]!(r)) k++;
        if (k === same.length) continue;
      }
      const part = partValues.map((read) => read(r));
      let bucket = 0;
      if (this.assigner) {
        const assigned = this.assigner.assign(
          serializeBinaryRow(this.partitionTypes, part),
          keyHashOf(
            this.bucketKeyTypes,
            bucketKeyValues.map((read) => read(r)),
          ),
        );
        bucket = typeof assigned === 'number' ? assigned : await assigned;
      } else if (this.numBuckets > 0)
        bucket = bucketOfValues(
          this.bucketKeyTypes,
          bucketKeyValues.map((read) => read(r)),
          this.numBuckets,
        );
      const key = `${bucket}|${partKey(part)}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { part, bucket, rows: 0 }));
      // Different raw values can still land in the same group (another row of the same bucket).
      if (runGroups.length > 0 && runGroups[runGroups.length - 1] === g) continue;
      runStarts.push(r);
      runGroups.push(g);
    }
    runStarts.push(n);
    const out: Array<[Value[], number, arrow.RecordBatch]> = [];
    const runs = runGroups.length;
    if (runs <= Math.max(groups.size, n / 64)) {
      for (let k = 0; k < runs; k++) {
        const g = runGroups[k]!;
        out.push([g.part, g.bucket, batch.slice(runStarts[k]!, runStarts[k + 1]!)]);
      }
      return out;
    }
    for (let k = 0; k < runs; k++) runGroups[k]!.rows += runStarts[k + 1]! - runStarts[k]!;
    const indices = new Map<RouteGroup, { rows: Int32Array; filled: number }>();
    for (const g of groups.values()) indices.set(g, { rows: new Int32Array(g.rows), filled: 0 });
    for (let k = 0; k < runs; k++) {
      const idx = indices.get(runGroups[k]!)!;
      for (let r = runStarts[k]!; r < runStarts[k + 1]!; r++) idx.rows[idx.filled++] = r;
    }
    for (const g of groups.values()) {
      const rows = indices.get(g)!.rows;
      const children = cols.map((c) => takeRows(c, rows));
      out.push([g.part, g.bucket, this.makeBatch(children, rows.length)]);
    }
    return out;
  }

  /**
   * Primary-key tables: opens the writers of these (partition, bucket)s from the latest snapshot
   * without new data, so that the next {@link prepareCommit} compacts what the table needs
   * compacted at commit (level 0 of deletion-vector and `changelog-producer` = `lookup` tables,
   * whose batch reads or changelog depend on it). Used after a commit dropped this writer's
   * compaction (a concurrent compaction replaced its inputs): the data it had compacted is live
   * in level 0 again. Does nothing for append tables.
   */
  async compactBuckets(buckets: Iterable<{ readonly partition: Uint8Array; readonly bucket: number }>): Promise<void> {
    if (!this.isPk) return;
    for (const { partition, bucket } of buckets) {
      await this.bucketBuffer(this.paths.partitionValues(partition), bucket).mergeTree!.restoreCompaction();
    }
  }

  /**
   * Dry runs ({@link TableWriteOptions.dryRun}): the rows written so far per partition (a
   * serialized partition row; empty for an unpartitioned table), in the order first seen.
   */
  routedRows(): Array<{ readonly partition: Uint8Array; readonly rows: number }> {
    return [...this.routed.values()].map((r) => ({ partition: r.partition, rows: r.rows }));
  }

  /** Counts the rows of a validated batch per partition, checking that each partition has a path as {@link buffer} does. */
  private countRouted(batch: arrow.RecordBatch): void {
    const cols = batch.data.children;
    const partValues = this.partitionIdx.map((c, k) => valueReader(cols[c]!, this.partitionTypes[k]!));
    for (let r = 0; r < batch.numRows; r++) {
      const part = partValues.map((read) => read(r));
      const key = partKey(part);
      const slot = this.routed.get(key);
      if (slot !== undefined) {
        slot.rows++;
        continue;
      }
      try {
        this.paths.partitionPath(part);
      } catch (e) {
        throw new WriteValidationError(undefined, r, `cannot build the partition path: ${(e as Error).message}`);
      }
      this.routed.set(key, { partition: serializeBinaryRow(this.partitionTypes, part), rows: 1 });
    }
  }

  private buffer(part: Value[], bucket: number, batch: arrow.RecordBatch): void {
    const buf = this.bucketBuffer(part, bucket);
    this.fillBuffer(buf, batch, batchByteSize(batch) + (buf.mergeTree ? batch.numRows * MERGE_RECORD_OVERHEAD_BYTES : 0));
  }

  /** The buffer (and, for primary-key tables, the merge-tree writer) of a (partition, bucket). */
  private bucketBuffer(part: Value[], bucket: number): BucketBuffer {
    const key = `${bucket}|${partKey(part)}`;
    let buf = this.buffers.get(key);
    if (!buf) {
      let dir: string;
      try {
        dir = this.paths.partitionPath(part);
      } catch (e) {
        throw new WriteValidationError(undefined, undefined, `cannot build the partition path: ${(e as Error).message}`);
      }
      const partition = serializeBinaryRow(this.partitionTypes, part);
      buf = {
        key,
        partition,
        partitionDir: dir,
        bucket,
        batches: [],
        bytes: 0,
        nextSequence: undefined,
        newFiles: [],
        ...(this.isPk ? { mergeTree: this.newMergeTree(partition, dir, bucket) } : {}),
      };
      this.buffers.set(key, buf);
    }
    return buf;
  }

  private fillBuffer(buf: BucketBuffer, batch: arrow.RecordBatch, size: number): void {
    if (buf.mergeTree) {
      const columns = batch.data.children;
      const kinds = columns[columns.length - 1]!;
      // Arrow slices its value buffers along with the data: `values` starts at this slice's first row.
      buf.mergeTree.write(columns.slice(0, -1), (kinds.values as Int8Array).subarray(0, kinds.length));
    } else buf.batches.push(batch);
    buf.bytes += size;
    this.buffered += size;
  }

  private newMergeTree(partition: Uint8Array, partitionDir: string, bucket: number): MergeTreeWriter {
    const pathOf = (fileName: string): string => this.paths.dataFilePath(partitionDir, bucket, fileName);
    const newFileName = (): string => `${this.filePrefix}${this.fileCounter++}.parquet`;
    const beforeFile = (): Promise<void> => this.ensureRecorded();
    const newChangelogFileName = (): string => `${this.changelogFilePrefix}${this.fileCounter++}.parquet`;
    return new MergeTreeWriter({
      fileIO: this.fileIO,
      schema: this.schema,
      options: this.options,
      merge: this.merge!,
      pathOf,
      newFileName,
      beforeFile,
      startSequence: () => this.startSequenceOf(partition, bucket),
      ...(this.options.changelogProducer === 'input' ? { newChangelogFileName } : {}),
      ...(this.writeOptions.now ? { now: this.writeOptions.now } : {}),
      ...(this.writeOptions.compactManager
        ? {
            compactManager: this.writeOptions.compactManager({
              table: this.context,
              merge: this.merge!,
              partition,
              bucket,
              pathOf,
              newFileName,
              beforeFile,
              writeIndexFile: async (bytes) => {
                await this.ensureRecorded();
                const name = `${this.indexFilePrefix}${this.indexFileCounter++}`;
                await this.fileIO.write(this.paths.indexPath(name), bytes);
                return name;
              },
              newChangelogFileName,
            }),
          }
        : {}),
    });
  }

  // ---- flushing ---------------------------------------------------------------------------

  private estimatedFileSize(arrowBytes: number): number {
    return (arrowBytes * this.ratioNum) / this.ratioDen;
  }

  private async flushIfNeeded(): Promise<void> {
    if (this.isPk) {
      // A merge-tree bucket flushes only when memory runs short: each flush is one more sorted run.
      while (this.buffered > this.budget) {
        let largest: BucketBuffer | undefined;
        for (const buf of this.buffers.values()) if (!largest || buf.bytes > largest.bytes) largest = buf;
        if (!largest || largest.bytes === 0) break;
        this.buffered -= largest.bytes;
        largest.bytes = 0;
        await this.guard(largest.mergeTree!.flush());
      }
      return;
    }
    for (const buf of this.buffers.values()) {
      if (this.streaming) await this.streamBuffered(buf);
      // Only full files: the tail waits for more rows instead of becoming a small file.
      else if (buf.batches.length > 0 && this.estimatedFileSize(buf.bytes) >= this.options.targetFileSize) await this.flush(buf, true);
    }
    while (this.buffered > this.budget) {
      let largest: BucketBuffer | undefined;
      for (const buf of this.buffers.values()) if (!largest || buf.bytes > largest.bytes) largest = buf;
      if (!largest || largest.bytes === 0) break;
      await this.flush(largest);
    }
  }

  /**
   * Writes a buffer's rows as one or more files of at most ~target-file-size each. With
   * `keepTail`, rows that do not fill a whole file stay buffered for the next flush.
   */
  private async flush(buf: BucketBuffer, keepTail = false): Promise<void> {
    const batches = buf.batches;
    this.buffered -= buf.bytes;
    buf.batches = [];
    buf.bytes = 0;
    if (buf.nextSequence === undefined) {
      buf.nextSequence = await this.startSequenceOf(buf.partition, buf.bucket);
    }
    let file: arrow.RecordBatch[] = [];
    let fileBytes = 0;
    const target = this.options.targetFileSize;
    const queue = [...batches];
    while (queue.length > 0) {
      const batch = queue.shift()!;
      const size = batchByteSize(batch);
      const room = target - this.estimatedFileSize(fileBytes);
      if (this.estimatedFileSize(size) > room && batch.numRows > 1) {
        // Take as many rows as fit; the rest goes back to the queue.
        const perRow = this.estimatedFileSize(size) / batch.numRows;
        const take = Math.floor(room / perRow);
        if (take > 0) {
          file.push(batch.slice(0, take));
          fileBytes += (size * take) / batch.numRows;
          queue.unshift(batch.slice(take));
        } else if (file.length === 0) {
          file.push(batch.slice(0, 1));
          queue.unshift(batch.slice(1));
        } else queue.unshift(batch);
        await this.writeFile(buf, file, fileBytes);
        file = [];
        fileBytes = 0;
        continue;
      }
      file.push(batch);
      fileBytes += size;
    }
    if (file.length === 0) return;
    if (keepTail && this.estimatedFileSize(fileBytes) < target) {
      // Ahead of anything buffered meanwhile, so rows keep their order.
      buf.batches.unshift(...file);
      buf.bytes += fileBytes;
      this.buffered += fileBytes;
      return;
    }
    await this.writeFile(buf, file, fileBytes);
  }

  /**
   * Why the row groups of data file `file` cannot go into this writer's files as they are (see
   * {@link writeRowGroupsOf}), or null when they can: the writer must stream row groups
   * (`streamRowGroupRows`, append table); the file's groups must hold at least `minGroupRows` rows
   * each and have the schema and compression this writer encodes (compared with an empty file it
   * encodes); its statistics must merge into what its rows would give
   * (`FileStatsCollector.fileStatsBlocker`). The caller checks that the file is of this writer's
   * schema id (whose options decide the statistics) and has no deletion vector.
   */
  async rowGroupCopyBlocker(file: RowGroupSource, minGroupRows: number): Promise<string | null> {
    if (!this.streaming) return 'the writer does not stream row groups (streamRowGroupRows)';
    const stats = new FileStatsCollector(this.schema.fields, this.options).fileStatsBlocker(file);
    if (stats !== null) return stats;
    this.emptyFile ??= encodeParquetAsync(new arrow.Table(this.arrowSchema), { compression: this.compression });
    return rowGroupCopyBlocker(file.bytes, await this.emptyFile, this.compression, minGroupRows);
  }

  /**
   * Appends the row groups of an existing data file to the open file of (`partition`, `bucket`),
   * after the rows written there before, without decoding them; its statistics merge into the
   * file's. A compaction copies inputs whose row groups are already as large as a rewrite would
   * cut them this way. Check the file with {@link rowGroupCopyBlocker} first. The open file is
   * closed first when the copy would take it past `target-file-size`; a copied file is never split.
   *
   * @param partition the partition as the manifest stores it (BinaryRow bytes).
   */
  async writeRowGroupsOf(partition: Uint8Array, bucket: number, file: RowGroupSource): Promise<void> {
    this.checkOpen();
    if (!this.streaming)
      throw new WriteValidationError(undefined, undefined, 'writeRowGroupsOf needs streamRowGroupRows on an append table');
    const arrowBytes = this.arrowBytesOf(file.bytes.length);
    const open = await this.beginWholeFile(partition, bucket, file, arrowBytes);
    open.arrowBytes += arrowBytes;
    await this.guard(open.stream.addParquet(file.bytes, file.rowCount));
  }

  /**
   * The open file of (`partition`, `bucket`) that a whole existing data file of `arrowBytes`
   * (estimated) joins: rows written before are streamed ahead of it, and the open file is closed
   * first when the file would take it past `target-file-size` (a file is never split, so its
   * statistics, merged here, cover exactly its rows).
   */
  private async beginWholeFile(
    partition: Uint8Array,
    bucket: number,
    file: { readonly rowCount: number; readonly valueStats: SimpleStats; readonly valueStatsCols: readonly string[] | null },
    arrowBytes: number,
  ): Promise<OpenFile> {
    const buf = this.bufferAt(partition, bucket);
    await this.streamBuffered(buf);
    if (buf.open && this.estimatedFileSize(buf.open.arrowBytes + arrowBytes) > this.options.targetFileSize) await this.closeOpenFile(buf);
    const open = (buf.open ??= this.newOpenFile());
    open.stats.addFileStats(file);
    open.rows += file.rowCount;
    return open;
  }

  /** Parquet bytes as the Arrow bytes that the file-size estimate counts. */
  private arrowBytesOf(parquetBytes: number): number {
    return (parquetBytes * this.ratioDen) / this.ratioNum;
  }

  /**
   * Why the rows of data file `file` cannot be written with {@link startIpcFile} and
   * {@link writeIpc} (as the IPC streams its row groups were decoded into, `sample` being one of
   * them), or null when they can: the writer must stream row groups (`streamRowGroupRows`, append
   * table) at least as large as the file, the stream's schema must be the one this writer encodes (so the rows need no
   * conversion), and the file's statistics must stand in for its rows
   * (`FileStatsCollector.fileStatsBlocker`). The caller checks that the file is of this writer's
   * schema id (whose options decide the statistics, the partition and the bucket of each row)
   * and has no deletion vector.
   */
  ipcFileBlocker(
    file: { readonly rowCount: number; readonly valueStats: SimpleStats; readonly valueStatsCols: readonly string[] | null },
    sample: IpcStreamSegment,
  ): string | null {
    if (!this.streaming) return 'the writer does not stream row groups (streamRowGroupRows)';
    // A larger row group would have to be cut, i.e. decoded here: the Arrow path does that.
    const groupRows = this.writeOptions.streamRowGroupRows!;
    if (file.rowCount > groupRows) return `it holds more rows (${file.rowCount}) than an output row group (${groupRows})`;
    const stats = new FileStatsCollector(this.schema.fields, this.options).fileStatsBlocker(file);
    if (stats !== null) return stats;
    // The decode workers emit the same schema message for every group of one table schema.
    const key = Buffer.from(sample.schemaMessage.buffer, sample.schemaMessage.byteOffset, sample.schemaMessage.byteLength).toString(
      'latin1',
    );
    let same = this.ipcSchemas.get(key);
    if (same === undefined) {
      // The schema the Arrow path hands the encoder (a schema with Timestamp[s], which the encoder
      // writes as milliseconds, never matches a decoded one: such rows take the Arrow path).
      same = sameIpcSchema(ipcSegmentSchema(sample), this.arrowSchema);
      this.ipcSchemas.set(key, same);
    }
    return same ? null : 'its decoded Arrow schema is not the one this writer encodes';
  }

  /** Schema messages of decoded IPC streams seen by {@link ipcFileBlocker}, and whether they match. */
  private readonly ipcSchemas = new Map<string, boolean>();

  /**
   * Starts the rows of data file `file` in the open file of (`partition`, `bucket`): its
   * statistics merge into the open file's, and its rows follow with {@link writeIpc}, one call per
   * row group in order. Rows written before stay ahead. The open file is closed first when this
   * file would take it past `target-file-size`, so a file's rows are never split between outputs
   * (its statistics cover them all). Check the file with {@link ipcFileBlocker} first.
   *
   * @param partition the partition as the manifest stores it (BinaryRow bytes).
   */
  async startIpcFile(
    partition: Uint8Array,
    bucket: number,
    file: {
      readonly rowCount: number;
      readonly fileSize: number;
      readonly valueStats: SimpleStats;
      readonly valueStatsCols: readonly string[] | null;
    },
  ): Promise<void> {
    this.checkOpen();
    if (!this.streaming) throw new WriteValidationError(undefined, undefined, 'startIpcFile needs streamRowGroupRows on an append table');
    await this.beginWholeFile(partition, bucket, file, this.arrowBytesOf(file.fileSize));
  }

  /**
   * Appends a row group of the file begun with {@link startIpcFile}, as the decode worker's IPC
   * stream: the encode worker joins it with the rest of its output row group, so the rows are not
   * turned into Arrow on this thread. A group that is not a plain stream comes as a batch in this
   * writer's schema (its statistics are in the file's already).
   */
  async writeIpc(partition: Uint8Array, bucket: number, segment: IpcStreamSegment | arrow.RecordBatch): Promise<void> {
    this.checkOpen();
    const open = this.bufferAt(partition, bucket).open;
    if (open === undefined) throw new WriteValidationError(undefined, undefined, 'writeIpc without startIpcFile');
    if (segment instanceof arrow.RecordBatch) {
      // A group of the file that did not decode to a plain stream: its rows, in this writer's schema.
      open.arrowBytes += batchByteSize(segment);
      await this.guard(open.stream.add(segment));
      return;
    }
    // The IPC body is the Arrow buffers, padded: the size estimate against `target-file-size`.
    open.arrowBytes += segment.batchesEnd - segment.schemaEnd;
    await this.guard(open.stream.addIpc(segment));
  }

  /** The buffer of (`partition` as BinaryRow bytes, `bucket`), created when new. */
  private bufferAt(partition: Uint8Array, bucket: number): BucketBuffer {
    for (const b of this.buffers.values()) if (b.bucket === bucket && Buffer.compare(b.partition, partition) === 0) return b;
    return this.bucketBuffer(deserializeBinaryRow(partition, this.partitionTypes), bucket);
  }

  private newOpenFile(): OpenFile {
    return {
      stream: new ParquetRowGroupStream({ groupRows: this.writeOptions.streamRowGroupRows!, compression: this.compression }),
      stats: new FileStatsCollector(this.schema.fields, this.options),
      rows: 0,
      arrowBytes: 0,
    };
  }

  private get streaming(): boolean {
    return this.writeOptions.streamRowGroupRows !== undefined && !this.isPk;
  }

  /**
   * `streamRowGroupRows`: moves a bucket's buffered rows into its open file (whose full row groups
   * go to the encoder at once), closing the file where it reaches `target-file-size`.
   */
  private async streamBuffered(buf: BucketBuffer): Promise<void> {
    const batches = buf.batches;
    this.buffered -= buf.bytes;
    buf.batches = [];
    buf.bytes = 0;
    const target = this.options.targetFileSize;
    for (let batch of batches) {
      while (batch.numRows > 0) {
        const open = (buf.open ??= this.newOpenFile());
        const size = batchByteSize(batch);
        const room = target - this.estimatedFileSize(open.arrowBytes);
        let take = batch.numRows;
        if (this.estimatedFileSize(size) > room) {
          // As many rows as fit; a file takes at least one row.
          take = Math.max(open.rows === 0 ? 1 : 0, Math.floor(room / (this.estimatedFileSize(size) / batch.numRows)));
        }
        if (take > 0) {
          const head = take === batch.numRows ? batch : batch.slice(0, take);
          open.stats.add(head);
          open.rows += take;
          open.arrowBytes += (size * take) / batch.numRows;
          // The rows have left the buffers: a failed encoding leaves the writer unusable.
          await this.guard(open.stream.add(head));
        }
        if (take === batch.numRows) break;
        await this.closeOpenFile(buf);
        batch = batch.slice(take);
      }
    }
  }

  /** Finishes a bucket's open file and writes it (see {@link startFile}). */
  private async closeOpenFile(buf: BucketBuffer): Promise<void> {
    const open = buf.open!;
    buf.open = undefined;
    await this.startFile(buf, open.rows, open.arrowBytes, open.stats, open.stream.finish());
  }

  /** Drops the open files' rows and waits for their groups being encoded. */
  private async dropOpenFiles(): Promise<void> {
    for (const buf of this.buffers.values()) {
      const open = buf.open;
      buf.open = undefined;
      await open?.stream.abort();
    }
  }

  private async writeFile(buf: BucketBuffer, batches: arrow.RecordBatch[], arrowBytes: number): Promise<void> {
    const rowCount = batches.reduce((n, b) => n + b.numRows, 0);
    if (rowCount === 0) return;
    // The Arrow → IPC step runs now; parquet-wasm encodes the file's row groups on the worker threads
    // (parquet-worker-pool.ts; TIDEMARK_PARQUET_WORKERS=0 keeps it on this thread) while this thread
    // computes the statistics and goes on building the next file.
    const encoding = encodeParquetRowGroupsAsync(batches, {
      compression: this.compression,
      ...(this.writeOptions.rowGroupRows !== undefined ? { rowGroupRows: this.writeOptions.rowGroupRows } : {}),
    });
    // Handled through the upload in startFile; this keeps an early throw from leaving it unobserved.
    encoding.catch(() => undefined);
    const stats = new FileStatsCollector(this.schema.fields, this.options);
    for (const b of batches) stats.add(b);
    await this.startFile(buf, rowCount, arrowBytes, stats, encoding);
  }

  /**
   * Names a data file whose bytes are being encoded, and writes it once they are: this one
   * encoding, and uploads of earlier files as {@link makeRoom} allows.
   */
  private async startFile(
    buf: BucketBuffer,
    rowCount: number,
    arrowBytes: number,
    stats: FileStatsCollector,
    encoded: Promise<Uint8Array>,
  ): Promise<void> {
    const encoding = encoded.then((bytes) => {
      this.ratioNum += bytes.length;
      this.ratioDen += arrowBytes;
      return bytes;
    });
    // Handled through the upload below; this keeps an early throw from leaving it unobserved.
    encoding.catch(() => undefined);
    const firstFile = this.ratioDen === 1;
    if (buf.nextSequence === undefined) {
      buf.nextSequence = await this.startSequenceOf(buf.partition, buf.bucket);
    }
    const fileName = `${this.filePrefix}${this.fileCounter++}.parquet`;
    const minSeq = buf.nextSequence!;
    buf.nextSequence = minSeq + BigInt(rowCount);
    const { valueStats, valueStatsCols } = stats.result();
    const now = (this.writeOptions.now ?? Date.now)();
    const path = this.paths.dataFilePath(buf.partitionDir, buf.bucket, fileName);
    const estimated = this.estimatedFileSize(arrowBytes);
    await this.makeRoom(buf, estimated);
    try {
      await this.ensureRecorded();
    } catch (e) {
      // The rows of this file have left the buffers: the writer must not carry on without them.
      this.failure = e;
      throw e;
    }
    const upload = encoding
      .then(async (bytes) => {
        await this.fileIO.write(path, bytes);
        buf.newFiles.push(
          newDataFileMeta({
            fileName,
            fileSize: bytes.length,
            rowCount,
            valueStats,
            minSequenceNumber: minSeq,
            maxSequenceNumber: minSeq + BigInt(rowCount) - 1n,
            schemaId: this.schema.id,
            creationTime: creationTimeOf(now),
            deleteRowCount: 0,
            fileSource: FILE_SOURCE_APPEND,
            valueStatsCols,
          }),
        );
      })
      .then(undefined, (e: unknown) => {
        // The rows of this file have left the buffers: the writer must not carry on without them.
        this.failure = e;
      })
      .finally(() => {
        this.uploads.delete(upload);
      });
    this.uploads.set(upload, estimated);
    buf.uploading = upload;
    // Until one file is written the size estimate is a pessimistic guess: let the first file set it
    // before the next file is cut.
    if (firstFile) await encoding.catch(() => undefined);
  }

  private async drain(): Promise<void> {
    await this.uploaded();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Every upload started so far has settled. */
  private async uploaded(): Promise<void> {
    while (this.uploads.size > 0) await Promise.all(this.uploads.keys());
  }

  /**
   * Waits until a file of `buf` of about `bytes` may start uploading: after the bucket's previous
   * file (a bucket's files are listed in the order written), and while other buckets' uploads
   * leave room. Files of different buckets upload together (a small append to several buckets
   * costs one round trip, not one per bucket), as long as they add up to at most
   * `target-file-size`: large files still go one at a time, so memory stays at about one file
   * being uploaded and one being encoded.
   */
  private async makeRoom(buf: BucketBuffer, bytes: number): Promise<void> {
    await buf.uploading;
    const inFlight = (): number => [...this.uploads.values()].reduce((a, b) => a + b, 0);
    while (this.uploads.size >= MAX_UPLOADS || (this.uploads.size > 0 && inFlight() + bytes > this.options.targetFileSize)) {
      await Promise.race(this.uploads.keys());
    }
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Data files uploaded at once (of different buckets). */
const MAX_UPLOADS = 8;

/**
 * Creates a writer from storage, root and schema (see {@link TableWrite}).
 *
 * @deprecated Use `table.newBatchWrite()`, which continues each bucket's sequence numbers, or `new TableWrite(table.context)`.
 */
export function newTableWrite(fileIO: FileIO, location: string, schema: TableSchema, options: TableWriteOptions = {}): TableWrite {
  return new TableWrite(fileIO, location, schema, options);
}

function batchByteSize(batch: arrow.RecordBatch): number {
  let s = 0;
  for (const c of batch.data.children) s += dataByteSize(c);
  return s;
}

function partKey(values: readonly Value[]): string {
  if (values.length === 0) return '';
  return values
    .map((v) => {
      if (v === null) return 'N';
      if (v instanceof Uint8Array) return 'b' + Buffer.from(v).toString('hex');
      if (typeof v === 'object') return 'o' + JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
      return typeof v + ':' + String(v);
    })
    .join('\u0000');
}

function bytesKey(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
