/**
 * The writer of an append table's files (Java's `AppendOnlyFileStoreWrite` with its
 * `AppendOnlyWriter`s): per (partition, bucket), rows wait as Arrow batches and roll into Parquet
 * data files of about `target-file-size`, encoded on the worker pool; with `streamRowGroupRows`
 * a file's row groups are encoded while its rows still arrive, and compaction can join whole
 * files (their row groups or decoded IPC streams) to the open file without decoding them here.
 *
 * Files of different buckets upload together (up to {@link MAX_UPLOADS}, adding up to at most
 * `target-file-size`); a bucket's own files upload one after another, in the order written.
 */
import * as arrow from 'apache-arrow';
import {
  FILE_SOURCE_APPEND,
  encodeParquetAsync,
  encodeParquetRowGroupsAsync,
  ipcSegmentSchema,
  newDataFileMeta,
  ParquetRowGroupStream,
  rowGroupCopyBlocker,
  sameIpcSchema,
  toArrowSchema,
  type DataFileMeta,
  type DataType,
  type IpcStreamSegment,
  type ParquetCompression,
  type SimpleStats,
  type Value,
} from '@tidemark/format';
import type { CommitMessage } from '../commit-message.js';
import type { TableContext } from '../table-context.js';
import { batchByteSize } from './arrow-columns.js';
import { FileSizeEstimate } from './file-size-estimate.js';
import { FileStoreWrite, MAX_UPLOADS, type BucketSlot } from './file-store-write.js';
import { creationTimeOf, parquetCompressionOf } from './file-format.js';
import type { RowGroupSource, TableWriteOptions } from './table-write-options.js';
import { FileStatsCollector } from './value-stats.js';
import { WriteValidationError } from './write-errors.js';
import { DataFileIndexWriter, NO_FILE_INDEX } from '../file-index/data-file-index-writer.js';
import { fileIndexSettings, type FileIndexSettings } from '../file-index/file-index-options.js';

/** Why a writer cannot join whole files to its output: it does not stream row groups. */
export const NOT_STREAMING = 'the writer does not stream row groups (streamRowGroupRows)';

/** The error of a whole-file call (`writeRowGroupsOf`, `startIpcFile`) on a writer that does not stream row groups. */
export function notStreaming(call: string): WriteValidationError {
  return new WriteValidationError(undefined, undefined, `${call} needs streamRowGroupRows on an append table`);
}

/** Why whole files cannot join an indexed table's output: their rows must be decoded to index them. */
const INDEXED = "the table has a data-file index ('file-index.bloom-filter.columns'): the rows must be decoded to index them";

/** A (partition, bucket) of an append table. */
interface AppendSlot extends BucketSlot {
  batches: arrow.RecordBatch[];
  nextSequence: bigint | undefined;
  newFiles: DataFileMeta[];
  /** With `streamRowGroupRows`: the data file whose row groups are being encoded. */
  open?: OpenFile;
  /** The upload of the bucket's last file (its files are uploaded one after another, in order). */
  uploading?: Promise<void>;
}

/** What the open file takes over from a whole data file joined to it: its row count and statistics. */
type WholeFile = { readonly rowCount: number; readonly valueStats: SimpleStats; readonly valueStatsCols: readonly string[] | null };

/** A data file being encoded group by group (`streamRowGroupRows`). */
interface OpenFile {
  readonly stream: ParquetRowGroupStream;
  readonly stats: FileStatsCollector;
  /** The file's index (`file-index.bloom-filter.columns`), or null. */
  readonly index: DataFileIndexWriter | null;
  rows: number;
  /** Arrow bytes of its rows: the size estimate against `target-file-size`. */
  arrowBytes: number;
}

/** Writes the data files of an append table. */
export class AppendFileStoreWrite extends FileStoreWrite<AppendSlot> {
  private readonly compression: ParquetCompression;
  private readonly arrowSchema: arrow.Schema;
  private readonly totalBuckets: number;
  private readonly estimate = new FileSizeEstimate();
  /** Data file uploads in flight (they never reject: a failure is kept in `failure`), with their estimated bytes. */
  private readonly uploads = new Map<Promise<void>, number>();
  /** Schema messages of decoded IPC streams seen by {@link ipcFileBlocker}, and whether they match. */
  private readonly ipcSchemas = new Map<string, boolean>();
  /** An empty Parquet file as this writer encodes it: the reference of {@link rowGroupCopyBlocker}. */
  private emptyFile: Promise<Uint8Array> | undefined;
  /** The data-file index each file gets, or null. */
  private readonly fileIndex: FileIndexSettings | null;

  constructor(context: TableContext, writeOptions: TableWriteOptions, partitionTypes: readonly DataType[]) {
    super(context, writeOptions, partitionTypes, null);
    this.compression = parquetCompressionOf(this.options);
    this.arrowSchema = toArrowSchema(this.schema.fields);
    this.totalBuckets = this.options.bucket > 0 ? this.options.bucket : -1;
    this.fileIndex = fileIndexSettings(this.schema, this.options);
  }

  protected newSlot(common: BucketSlot): AppendSlot {
    return { ...common, batches: [], nextSequence: undefined, newFiles: [] };
  }

  write(part: Value[], bucket: number, batch: arrow.RecordBatch): void {
    const slot = this.slotOf(part, bucket);
    const size = batchByteSize(batch);
    slot.batches.push(batch);
    slot.bytes += size;
    this.buffered += size;
  }

  async flushIfNeeded(): Promise<void> {
    for (const buf of this.slots.values()) {
      if (this.streaming) await this.streamBuffered(buf);
      // Only full files: the tail waits for more rows instead of becoming a small file.
      else if (buf.batches.length > 0 && this.estimate.fileBytes(buf.bytes) >= this.options.targetFileSize) await this.flush(buf, true);
    }
    while (this.buffered > this.budget) {
      const largest = this.largestSlot();
      if (!largest) break;
      await this.flush(largest);
    }
  }

  async prepareCommit(): Promise<CommitMessage[]> {
    for (const buf of this.slots.values()) {
      if (this.streaming) {
        await this.streamBuffered(buf);
        if (buf.open) await this.closeOpenFile(buf);
      } else if (buf.batches.length > 0) await this.flush(buf);
    }
    await this.drain();
    const messages: CommitMessage[] = [];
    for (const buf of this.slots.values()) {
      if (buf.newFiles.length === 0) continue;
      messages.push({ partition: buf.partition, bucket: buf.bucket, totalBuckets: this.totalBuckets, newFiles: buf.newFiles });
      buf.newFiles = [];
    }
    return messages;
  }

  async abort(): Promise<void> {
    await this.uploaded();
    await this.dropOpenFiles();
    const paths: string[] = [];
    for (const buf of this.slots.values()) {
      for (const f of buf.newFiles) {
        const path = this.paths.dataFilePath(buf.partitionDir, buf.bucket, f.fileName);
        paths.push(path, ...this.paths.extraFilePaths(path, f.extraFiles));
      }
      buf.newFiles = [];
      buf.batches = [];
      buf.bytes = 0;
    }
    this.buffered = 0;
    await this.fileIO.deleteMany(paths);
  }

  async close(): Promise<void> {
    await this.uploaded();
    await this.dropOpenFiles();
    this.slots.clear();
  }

  /**
   * Writes a buffer's rows as one or more files of at most ~target-file-size each. With
   * `keepTail`, rows that do not fill a whole file stay buffered for the next flush.
   */
  private async flush(buf: AppendSlot, keepTail = false): Promise<void> {
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
      const room = target - this.estimate.fileBytes(fileBytes);
      if (this.estimate.fileBytes(size) > room && batch.numRows > 1) {
        // Take as many rows as fit; the rest goes back to the queue.
        const perRow = this.estimate.fileBytes(size) / batch.numRows;
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
    if (keepTail && this.estimate.fileBytes(fileBytes) < target) {
      // Ahead of anything buffered meanwhile, so rows keep their order.
      buf.batches.unshift(...file);
      buf.bytes += fileBytes;
      this.buffered += fileBytes;
      return;
    }
    await this.writeFile(buf, file, fileBytes);
  }

  /** See `TableWrite.rowGroupCopyBlocker`. */
  async rowGroupCopyBlocker(file: RowGroupSource, minGroupRows: number): Promise<string | null> {
    if (!this.streaming) return NOT_STREAMING;
    if (this.fileIndex !== null) return INDEXED;
    const stats = new FileStatsCollector(this.schema.fields, this.options).fileStatsBlocker(file);
    if (stats !== null) return stats;
    this.emptyFile ??= encodeParquetAsync(new arrow.Table(this.arrowSchema), { compression: this.compression });
    return rowGroupCopyBlocker(file.bytes, await this.emptyFile, this.compression, minGroupRows);
  }

  /** See `TableWrite.writeRowGroupsOf`. */
  async writeRowGroupsOf(partition: Uint8Array, bucket: number, file: RowGroupSource): Promise<void> {
    if (!this.streaming) throw notStreaming('writeRowGroupsOf');
    const arrowBytes = this.estimate.arrowBytes(file.bytes.length);
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
  private async beginWholeFile(partition: Uint8Array, bucket: number, file: WholeFile, arrowBytes: number): Promise<OpenFile> {
    const buf = this.slotAt(partition, bucket);
    await this.streamBuffered(buf);
    if (buf.open && this.estimate.fileBytes(buf.open.arrowBytes + arrowBytes) > this.options.targetFileSize) await this.closeOpenFile(buf);
    const open = (buf.open ??= this.newOpenFile());
    open.stats.addFileStats(file);
    open.rows += file.rowCount;
    return open;
  }

  /** See `TableWrite.ipcFileBlocker`. */
  ipcFileBlocker(file: WholeFile, sample: IpcStreamSegment): string | null {
    if (!this.streaming) return NOT_STREAMING;
    if (this.fileIndex !== null) return INDEXED;
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

  /** See `TableWrite.startIpcFile`. */
  async startIpcFile(partition: Uint8Array, bucket: number, file: WholeFile & { readonly fileSize: number }): Promise<void> {
    if (!this.streaming) throw notStreaming('startIpcFile');
    await this.beginWholeFile(partition, bucket, file, this.estimate.arrowBytes(file.fileSize));
  }

  /** See `TableWrite.writeIpc`. */
  async writeIpc(partition: Uint8Array, bucket: number, segment: IpcStreamSegment | arrow.RecordBatch): Promise<void> {
    const open = this.slotAt(partition, bucket).open;
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

  private newOpenFile(): OpenFile {
    return {
      stream: new ParquetRowGroupStream({ groupRows: this.writeOptions.streamRowGroupRows!, compression: this.compression }),
      stats: new FileStatsCollector(this.schema.fields, this.options),
      index: this.fileIndex === null ? null : new DataFileIndexWriter(this.fileIndex),
      rows: 0,
      arrowBytes: 0,
    };
  }

  private get streaming(): boolean {
    return this.writeOptions.streamRowGroupRows !== undefined;
  }

  /**
   * `streamRowGroupRows`: moves a bucket's buffered rows into its open file (whose full row groups
   * go to the encoder at once), closing the file where it reaches `target-file-size`.
   */
  private async streamBuffered(buf: AppendSlot): Promise<void> {
    const batches = buf.batches;
    this.buffered -= buf.bytes;
    buf.batches = [];
    buf.bytes = 0;
    const target = this.options.targetFileSize;
    for (let batch of batches) {
      while (batch.numRows > 0) {
        const open = (buf.open ??= this.newOpenFile());
        const size = batchByteSize(batch);
        const room = target - this.estimate.fileBytes(open.arrowBytes);
        let take = batch.numRows;
        if (this.estimate.fileBytes(size) > room) {
          // As many rows as fit; a file takes at least one row.
          take = Math.max(open.rows === 0 ? 1 : 0, Math.floor(room / (this.estimate.fileBytes(size) / batch.numRows)));
        }
        if (take > 0) {
          const head = take === batch.numRows ? batch : batch.slice(0, take);
          open.stats.add(head);
          open.index?.addBatch(head);
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
  private async closeOpenFile(buf: AppendSlot): Promise<void> {
    const open = buf.open!;
    buf.open = undefined;
    await this.startFile(buf, open.rows, open.arrowBytes, open.stats, open.index, open.stream.finish());
  }

  /** Drops the open files' rows and waits for their groups being encoded. */
  private async dropOpenFiles(): Promise<void> {
    for (const buf of this.slots.values()) {
      const open = buf.open;
      buf.open = undefined;
      await open?.stream.abort();
    }
  }

  private async writeFile(buf: AppendSlot, batches: arrow.RecordBatch[], arrowBytes: number): Promise<void> {
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
    const index = this.fileIndex === null ? null : new DataFileIndexWriter(this.fileIndex);
    for (const b of batches) {
      stats.add(b);
      index?.addBatch(b);
    }
    await this.startFile(buf, rowCount, arrowBytes, stats, index, encoding);
  }

  /**
   * Names a data file whose bytes are being encoded, and writes it once they are: this one
   * encoding, and uploads of earlier files as {@link makeRoom} allows.
   */
  private async startFile(
    buf: AppendSlot,
    rowCount: number,
    arrowBytes: number,
    stats: FileStatsCollector,
    index: DataFileIndexWriter | null,
    encoded: Promise<Uint8Array>,
  ): Promise<void> {
    const encoding = encoded.then((bytes) => {
      this.estimate.record(bytes.length, arrowBytes);
      return bytes;
    });
    // Handled through the upload below; this keeps an early throw from leaving it unobserved.
    encoding.catch(() => undefined);
    const firstFile = this.estimate.unset;
    if (buf.nextSequence === undefined) {
      buf.nextSequence = await this.startSequenceOf(buf.partition, buf.bucket);
    }
    const fileName = this.newDataFileName();
    const minSeq = buf.nextSequence!;
    buf.nextSequence = minSeq + BigInt(rowCount);
    const { valueStats, valueStatsCols } = stats.result();
    const now = (this.writeOptions.now ?? Date.now)();
    const path = this.paths.dataFilePath(buf.partitionDir, buf.bucket, fileName);
    const estimated = this.estimate.fileBytes(arrowBytes);
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
        const indexFields = index === null ? NO_FILE_INDEX : await index.finish(this.fileIO, path);
        buf.newFiles.push(
          newDataFileMeta({
            ...indexFields,
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
  private async makeRoom(buf: AppendSlot, bytes: number): Promise<void> {
    await buf.uploading;
    const inFlight = (): number => [...this.uploads.values()].reduce((a, b) => a + b, 0);
    while (this.uploads.size >= MAX_UPLOADS || (this.uploads.size > 0 && inFlight() + bytes > this.options.targetFileSize)) {
      await Promise.race(this.uploads.keys());
    }
    if (this.failure !== undefined) throw this.failure;
  }
}
