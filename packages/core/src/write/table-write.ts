/**
 * Batch writer of tables (Java's `TableWriteImpl`): validates input against the schema
 * (write-input.ts), routes rows to (partition, bucket)s (row-router.ts), and hands them to the
 * file store writer of the table's kind, which buffers them and writes data files: the append
 * writer (append-file-store-write.ts) or one merge-tree writer per bucket of a primary-key table
 * (key-value/key-value-file-store-write.ts); both share file names, the in-flight record and the
 * memory budget (file-store-write.ts). Nothing becomes visible until the {@link CommitMessage}s
 * are committed; {@link TableWrite.close} clears the writer's in-flight record: close after the commit.
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import {
  VALUE_KIND_FIELD_NAME,
  sharedParquetWorkerPool,
  toArrowSchema,
  type IpcStreamSegment,
  type SimpleStats,
  type TableSchema,
} from '@tidemark/format';
import type { CommitMessage } from '../commit-message.js';
import { mergeEngineOptions, type MergeEngineOptions } from '../read/merge-engine.js';
import { isTableContext, tableContext, type TableContext } from '../table-context.js';
import { AppendFileStoreWrite, NOT_STREAMING, notStreaming } from './append-file-store-write.js';
import type { FileStoreWrite } from './file-store-write.js';
import { KeyValueFileStoreWrite } from './key-value/key-value-file-store-write.js';
import { RowRouter } from './row-router.js';
import type { RowGroupSource, TableWriteOptions, WriteInput } from './table-write-options.js';
import { WriteInputConverter } from './write-input.js';
import { NotSupportedError, WriteValidationError } from './write-errors.js';

export type {
  BucketCompactionReport,
  CompactManagerContext,
  RowGroupSource,
  RowObject,
  TableWriteOptions,
  WriteInput,
} from './table-write-options.js';

/**
 * Writes rows of a table into new data files. Use one instance per batch of work: `write()` any
 * number of times, then `prepareCommit()`. On primary-key tables rows are upserts (or carry a row
 * kind, see {@link TableWriteOptions.rowKindField}), written by one merge-tree writer per
 * (partition, bucket).
 */
export class TableWrite {
  readonly fileIO: FileIO;
  /** Table root location. */
  readonly location: string;
  readonly schema: TableSchema;
  private readonly writeOptions: TableWriteOptions;
  private readonly input: WriteInputConverter;
  private readonly router: RowRouter;
  private readonly store: FileStoreWrite;
  /** The store of an append table (whole-file joins), null for primary-key tables. */
  private readonly appendStore: AppendFileStoreWrite | null;
  private closed = false;
  /** prepareCommit handed out files whose commit this writer cannot see. */
  private handedOut = false;

  /** A writer for the table of `context` (e.g. `table.context`). */
  constructor(context: TableContext, writeOptions?: TableWriteOptions);
  /** Shorthand: the context is built from the storage, root and schema. */
  constructor(fileIO: FileIO, location: string, schema: TableSchema, writeOptions?: TableWriteOptions);
  constructor(first: TableContext | FileIO, second?: TableWriteOptions | string, third?: TableSchema, fourth: TableWriteOptions = {}) {
    const ctx = isTableContext(first) ? first : tableContext(first, second as string, third!);
    const writeOptions = (isTableContext(first) ? (second as TableWriteOptions | undefined) : fourth) ?? {};
    checkWriteOptions(ctx, writeOptions);
    this.fileIO = ctx.fileIO;
    this.location = ctx.location;
    this.schema = ctx.schema;
    this.writeOptions = writeOptions;
    const merge = primaryKeyMerge(ctx.schema, writeOptions.rowKindField);
    const arrowSchema = toArrowSchema(ctx.schema.fields);
    const batchSchema = merge
      ? new arrow.Schema([...arrowSchema.fields, new arrow.Field(VALUE_KIND_FIELD_NAME, new arrow.Int8(), false)])
      : arrowSchema;
    this.input = new WriteInputConverter(ctx.schema, arrowSchema, batchSchema, merge, writeOptions.rowKindField);
    this.router = new RowRouter(ctx, writeOptions, (children, length) => this.input.makeBatch(children, length));
    const partitionTypes = this.router.partitionTypes;
    this.appendStore = merge ? null : new AppendFileStoreWrite(ctx, writeOptions, partitionTypes);
    this.store = this.appendStore ?? new KeyValueFileStoreWrite(ctx, writeOptions, partitionTypes, this.router.assigner, merge!);
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
    const batches = this.input.toBatches(input);
    if (this.writeOptions.dryRun) {
      for (const batch of batches) this.router.countRouted(batch);
      return;
    }
    const groups = [];
    for (const batch of batches) groups.push(...(await this.router.split(batch)));
    for (const [partValues, bucket, batch] of groups) this.store.write(partValues, bucket, batch);
    await this.store.flushIfNeeded();
  }

  /**
   * Writes all buffered rows and returns one message per (partition, bucket) with the files created
   * since the last call. Nothing is visible until the messages are committed.
   */
  async prepareCommit(): Promise<CommitMessage[]> {
    this.checkOpen();
    let messages = await this.store.prepareCommit();
    const assigner = this.router.assigner;
    if (assigner?.prepareCommit) {
      // Index files are covered by the writer's in-flight record like its data files.
      if (messages.length > 0) await this.store.ensureRecorded();
      messages = await assigner.prepareCommit(messages);
    }
    if (messages.length > 0) this.handedOut = true;
    return messages;
  }

  /** Name prefix of every data file of this writer (`<data-file.prefix><uuid>-`). */
  get filePrefix(): string {
    return this.store.filePrefix;
  }

  /** Name prefix of the index files this writer writes itself (deletion vectors): `index-<uuid>-`. */
  get indexFilePrefix(): string {
    return this.store.indexFilePrefix;
  }

  /** Name prefix of every changelog file of this writer (`<changelog-file.prefix><uuid>-`). */
  get changelogFilePrefix(): string {
    return this.store.changelogFilePrefix;
  }

  /** Id of this writer's in-flight record (`inflight/<id>.json`). */
  get inflightRecordId(): string {
    return this.store.inflightRecordId;
  }

  /**
   * Id of this writer's in-flight record while it exists (null before the first data file, and
   * when the writer records none). A commit of the writer's files may clear it with its own once
   * the snapshot exists (`CommitCallOptions.clearsRecords`); call {@link recordCleared} then.
   */
  get recordId(): string | null {
    return this.store.recordId;
  }

  /**
   * The commit of this writer's files cleared its in-flight record: {@link close} leaves it alone,
   * and a file written afterwards records it again.
   */
  recordCleared(): void {
    this.store.recordCleared();
  }

  /**
   * Deletes the files written since the last {@link prepareCommit} and discards buffered rows.
   * Clears the in-flight record too unless earlier `prepareCommit` calls handed out files (their
   * commit may still be pending; {@link close} clears it then).
   */
  async abort(): Promise<void> {
    await this.store.abort();
    if (!this.handedOut) await this.router.assigner?.abort?.();
    if (!this.handedOut) await this.store.clearRecord();
  }

  /**
   * Deletes the data files of `messages` (returned by this writer's {@link prepareCommit}) after
   * their commit was refused, so a failed command leaves no file behind. Call it only when no
   * snapshot can reference them: after a {@link commitNotApplied} error, never after an error
   * whose outcome is unknown. Files this writer did not write are left alone.
   */
  async discard(messages: readonly CommitMessage[]): Promise<void> {
    await this.store.discard(messages);
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
    await this.store.close();
    await this.store.clearRecord();
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
    if (this.store instanceof KeyValueFileStoreWrite) await this.store.compactBuckets(buckets);
  }

  /**
   * Dry runs ({@link TableWriteOptions.dryRun}): the rows written so far per partition (a
   * serialized partition row; empty for an unpartitioned table), in the order first seen.
   */
  routedRows(): Array<{ readonly partition: Uint8Array; readonly rows: number }> {
    return this.router.routedRows();
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
    return this.appendStore ? this.appendStore.rowGroupCopyBlocker(file, minGroupRows) : NOT_STREAMING;
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
    if (!this.appendStore) throw notStreaming('writeRowGroupsOf');
    await this.appendStore.writeRowGroupsOf(partition, bucket, file);
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
    return this.appendStore ? this.appendStore.ipcFileBlocker(file, sample) : NOT_STREAMING;
  }

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
    if (!this.appendStore) throw notStreaming('startIpcFile');
    await this.appendStore.startIpcFile(partition, bucket, file);
  }

  /**
   * Appends a row group of the file begun with {@link startIpcFile}, as the decode worker's IPC
   * stream: the encode worker joins it with the rest of its output row group, so the rows are not
   * turned into Arrow on this thread. A group that is not a plain stream comes as a batch in this
   * writer's schema (its statistics are in the file's already).
   */
  async writeIpc(partition: Uint8Array, bucket: number, segment: IpcStreamSegment | arrow.RecordBatch): Promise<void> {
    this.checkOpen();
    if (!this.appendStore) throw new WriteValidationError(undefined, undefined, 'writeIpc without startIpcFile');
    await this.appendStore.writeIpc(partition, bucket, segment);
  }

  private checkOpen(): void {
    if (this.closed) throw new NotSupportedError('this TableWrite is closed');
    this.store.checkFailure();
  }
}

/** Refuses writer options and table settings the writer cannot serve, before anything is set up. */
function checkWriteOptions(ctx: TableContext, writeOptions: TableWriteOptions): void {
  for (const name of ['rowGroupRows', 'streamRowGroupRows'] as const) {
    const rows = writeOptions[name];
    if (rows !== undefined && (!Number.isInteger(rows) || rows <= 0)) {
      throw new WriteValidationError(undefined, undefined, `TableWriteOptions.${name} must be a positive integer, got ${rows}`);
    }
  }
  if (ctx.options.bucket === -2) throw new NotSupportedError("writing tables with 'bucket' = -2 (postpone) is not supported yet");
  const rowKindField = writeOptions.rowKindField;
  if (rowKindField !== undefined && ctx.schema.fields.some((f) => f.name === rowKindField)) {
    throw new WriteValidationError(rowKindField, undefined, 'the row kind field must not be a table column');
  }
}

/**
 * The merge engine of a primary-key table (null for an append table, which takes no row kinds).
 *
 * @throws NotSupportedError when the primary key does not contain the partition keys, or row kinds are given for an append table
 */
function primaryKeyMerge(schema: TableSchema, rowKindField: string | undefined): MergeEngineOptions | null {
  if (schema.primaryKeys.length === 0) {
    if (rowKindField === undefined) return null;
    throw new NotSupportedError(
      `row kinds ('rowKindField' = '${rowKindField}') apply to primary-key tables only; append tables take inserts`,
    );
  }
  const missing = schema.partitionKeys.filter((k) => !schema.primaryKeys.includes(k));
  if (missing.length > 0) {
    throw new NotSupportedError(
      `cross-partition updates are not supported: the primary key (${schema.primaryKeys.join(', ')}) does not contain the partition key(s) ${missing.join(', ')}`,
    );
  }
  return mergeEngineOptions(schema);
}

/**
 * Creates a writer from storage, root and schema (see {@link TableWrite}).
 *
 * @deprecated Use `table.newBatchWrite()`, which continues each bucket's sequence numbers, or `new TableWrite(table.context)`.
 */
export function newTableWrite(fileIO: FileIO, location: string, schema: TableSchema, options: TableWriteOptions = {}): TableWrite {
  return new TableWrite(fileIO, location, schema, options);
}
