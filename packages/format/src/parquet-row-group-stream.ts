/**
 * One Parquet file encoded row group by row group while its rows are still arriving.
 *
 * `encodeParquetRowGroupsAsync` needs every row of a file before the first group can be encoded, so
 * whatever produces the rows (a compaction reading its inputs, say) and the encoding take turns
 * instead of sharing the cores. Here each group goes to the worker pool as soon as it is full; the
 * parts are joined by rewriting the footer only ({@link concatParquetFiles}) when the file is done.
 */
import * as arrow from 'apache-arrow';

import { FormatError } from './errors.js';
import { encodeColumnSplit, MIN_COLUMN_SPLIT_ROWS } from './parquet-column-split.js';
import { concatParquetFiles } from './parquet-concat.js';
import { sharedParquetWorkerPool, type ParquetWorkerPool } from './parquet-worker-pool.js';
import { joinIpcStreams, scanIpcStream, type IpcStreamSegment } from './ipc-stream.js';
import { encodeParquetIpc, parquetEncodeSettings, prepareParquetInput, type ParquetWriteOptions } from './parquet-writer.js';

/** Options of a {@link ParquetRowGroupStream}. */
export interface ParquetRowGroupStreamOptions extends Pick<ParquetWriteOptions, 'compression' | 'createdBy'> {
  /** Rows per row group: every group but the last has exactly this many. */
  readonly groupRows: number;
  /**
   * Pool that encodes the groups; `false` encodes on the calling thread. Default: the shared pool
   * (`TIDEMARK_PARQUET_WORKERS`, else min(2, available parallelism)).
   */
  readonly pool?: ParquetWorkerPool | false;
  /**
   * Groups handed to the pool and not yet encoded before {@link ParquetRowGroupStream.add} waits
   * for the oldest: bounds the memory of rows waiting for a worker when they arrive faster than
   * the workers encode them. Default: the pool's size + 1 (one group queued behind each busy worker).
   */
  readonly maxPendingGroups?: number;
}

/**
 * Encodes one Parquet file whose row groups are encoded on the worker pool as they fill up.
 * Call {@link add} with the rows in order, then {@link finish} for the file's bytes (or
 * {@link abort}). The file has a row group per `groupRows` rows, each with its own column
 * statistics and dictionaries, as `writeParquetFile` with `rowGroupSize` would cut it.
 */
export class ParquetRowGroupStream {
  private readonly groupRows: number;
  private readonly pool: ParquetWorkerPool | null;
  private readonly writeOptions: ParquetWriteOptions;
  private readonly maxPending: number;
  /** Rows not yet cut into a group: Arrow batches, or IPC streams passed through (never both). */
  private waiting: arrow.RecordBatch[] = [];
  private waitingIpc: IpcStreamSegment[] = [];
  private waitingRows = 0;
  /** Encoded (or encoding) groups in file order. */
  private readonly parts: Promise<Uint8Array>[] = [];
  /** How many of {@link parts} are known to be encoded (a prefix: they are awaited in order). */
  private settled = 0;
  private total = 0;
  private done = false;

  constructor(options: ParquetRowGroupStreamOptions) {
    const { groupRows } = options;
    if (!Number.isInteger(groupRows) || groupRows <= 0) {
      throw new FormatError(`ParquetRowGroupStream groupRows must be a positive integer, got ${groupRows}`);
    }
    this.groupRows = groupRows;
    this.pool = options.pool === false ? null : (options.pool ?? sharedParquetWorkerPool());
    const maxPending = options.maxPendingGroups ?? (this.pool?.size ?? 0) + 1;
    if (!Number.isInteger(maxPending) || maxPending <= 0) {
      throw new FormatError(`ParquetRowGroupStream maxPendingGroups must be a positive integer, got ${maxPending}`);
    }
    this.maxPending = maxPending;
    this.writeOptions = {
      ...(options.compression !== undefined ? { compression: options.compression } : {}),
      ...(options.createdBy !== undefined ? { createdBy: options.createdBy } : {}),
      rowGroupSize: groupRows,
    };
  }

  /** Rows added so far. */
  get rows(): number {
    return this.total;
  }

  /**
   * Adds rows (all batches must share one schema). Full groups are handed to the pool at once;
   * waits when {@link ParquetRowGroupStreamOptions.maxPendingGroups} groups are still encoding.
   * @throws ParquetEncodeError when an earlier group failed to encode.
   */
  async add(batch: arrow.RecordBatch): Promise<void> {
    if (this.done) throw new FormatError('ParquetRowGroupStream: add() after finish() or abort()');
    let offset = 0;
    while (offset < batch.numRows) {
      const take = Math.min(this.groupRows - this.waitingRows, batch.numRows - offset);
      const rows = offset === 0 && take === batch.numRows ? batch : batch.slice(offset, offset + take);
      // Among streams passed on (addIpc), rows join as a stream of their own: passed-on bytes never
      // become Arrow here again (which is also what their group's encoding needs: one IPC stream).
      const segment = this.waitingIpc.length > 0 ? this.asSegment([rows]) : null;
      if (segment !== null) this.waitingIpc.push(segment);
      else {
        if (this.waitingIpc.length > 0) this.ipcToArrow();
        this.waiting.push(rows);
      }
      this.waitingRows += take;
      this.total += take;
      offset += take;
      if (this.waitingRows === this.groupRows) {
        this.cut();
        // Backpressure: rows beyond a few groups would only wait in the pool's queue.
        while (this.parts.length - this.settled > this.maxPending) await this.parts[this.settled++];
      }
    }
  }

  /**
   * Adds the rows of an Arrow IPC stream (a row group decoded on a worker) without turning them
   * into Arrow here: the streams of a group are joined and encoded on the pool (or, without
   * workers, on this thread), so this thread only hands bytes on. Its schema must be the one the
   * batches of {@link add} have (the caller checks, e.g. with `sameIpcSchema`). Rows of
   * {@link add} waiting for their group become a stream first. Groups are cut between streams, at
   * the boundary nearest to `groupRows`; a stream of more rows than a group is decoded here and
   * added as Arrow (cut exactly), so callers keep such streams for {@link add}.
   */
  async addIpc(segment: IpcStreamSegment): Promise<void> {
    if (this.done) throw new FormatError('ParquetRowGroupStream: addIpc() after finish() or abort()');
    if (segment.rows === 0) return;
    const pending = this.waiting.length > 0 ? this.asSegment(this.waiting) : undefined;
    if (segment.rows > this.groupRows || pending === null) {
      for (const batch of arrow.tableFromIPC(segment.bytes).batches) await this.add(batch);
      return;
    }
    if (pending !== undefined) {
      this.waiting = [];
      this.waitingIpc.push(pending);
    }
    // Cut before this stream when the group would overshoot by more than it now falls short.
    const over = this.waitingRows + segment.rows - this.groupRows;
    if (this.waitingRows > 0 && over > 0 && over > this.groupRows - this.waitingRows) await this.cutAndWait();
    this.waitingIpc.push(segment);
    this.waitingRows += segment.rows;
    this.total += segment.rows;
    if (this.waitingRows >= this.groupRows) await this.cutAndWait();
  }

  /**
   * Appends the row groups of an encoded Parquet file after the rows added so far, without
   * decoding them: the rows waiting for a full group become a (smaller) group of their own first,
   * so the file keeps the rows' order. `file` must have the schema and compression this stream
   * encodes with (see `rowGroupCopyBlocker`); {@link finish} throws otherwise.
   */
  async addParquet(file: Uint8Array, rows: number): Promise<void> {
    if (this.done) throw new FormatError('ParquetRowGroupStream: addParquet() after finish() or abort()');
    if (!Number.isInteger(rows) || rows <= 0) throw new FormatError(`ParquetRowGroupStream.addParquet: rows must be positive, got ${rows}`);
    if (this.waitingRows > 0) this.cut();
    this.parts.push(Promise.resolve(file));
    this.total += rows;
    while (this.parts.length - this.settled > this.maxPending) await this.parts[this.settled++];
  }

  /**
   * Encodes the last (partial) group and returns the whole file.
   * @throws ParquetEncodeError when a group failed to encode; FormatError when no row was added
   *   (the stream has no schema to write then).
   */
  async finish(): Promise<Uint8Array> {
    if (this.done) throw new FormatError('ParquetRowGroupStream: finish() called twice or after abort()');
    if (this.total === 0) throw new FormatError('ParquetRowGroupStream: finish() without rows (a Parquet file needs a schema)');
    if (this.waitingRows > 0) this.cut(true);
    this.done = true;
    return concatParquetFiles(await Promise.all(this.parts));
  }

  /** Drops the rows and waits for the groups being encoded (their results or errors are discarded). */
  async abort(): Promise<void> {
    this.done = true;
    this.waiting = [];
    this.waitingIpc = [];
    this.waitingRows = 0;
    await Promise.all(this.parts.map((p) => p.catch(() => undefined)));
  }

  private async cutAndWait(): Promise<void> {
    this.cut();
    while (this.parts.length - this.settled > this.maxPending) await this.parts[this.settled++];
  }

  /** Rows as the IPC stream the encoder reads, or null when it is not plain (dictionary columns). */
  private asSegment(batches: readonly arrow.RecordBatch[]): IpcStreamSegment | null {
    return scanIpcStream(prepareParquetInput(batches, this.writeOptions).ipc);
  }

  /** The IPC streams waiting for their group, as Arrow batches (rows from {@link add} follow them). */
  private ipcToArrow(): void {
    const streams = this.waitingIpc;
    this.waitingIpc = [];
    for (const s of streams) this.waiting.push(...arrow.tableFromIPC(s.bytes).batches);
  }

  /**
   * Hands the waiting rows to the pool as one group (its Arrow → IPC step runs here). The file's
   * last group (`last`: cut by finish()) and a group cut while a worker has nothing to do (the last
   * full group of a compaction, say, cut after every input was decoded) have their columns encoded
   * on all workers at once and stitched into one row group (`encodeColumnSplit`): otherwise such a
   * group's encoding runs on one worker while another idles.
   */
  private cut(last = false): void {
    const pool = this.pool;
    if (pool !== null && pool.size >= 2 && this.waitingRows >= MIN_COLUMN_SPLIT_ROWS && (last || pool.pending < pool.size)) {
      // Streams passed on become Arrow here: the columns are split on this thread.
      if (this.waitingIpc.length > 0) this.ipcToArrow();
      const part = encodeColumnSplit(pool, this.waiting, this.writeOptions);
      if (part !== null) {
        this.waiting = [];
        this.waitingRows = 0;
        part.catch(() => undefined); // awaited in order by add() or finish()
        this.parts.push(part);
        return;
      }
    }
    if (this.waitingIpc.length > 0) {
      const streams = this.waitingIpc;
      this.waitingIpc = [];
      // A group cut between streams may hold a little more than groupRows: still one row group.
      const settings = parquetEncodeSettings({ ...this.writeOptions, rowGroupSize: Math.max(this.groupRows, this.waitingRows) });
      this.waitingRows = 0;
      let part: Promise<Uint8Array>;
      if (this.pool === null) {
        try {
          part = Promise.resolve(encodeParquetIpc(joinIpcStreams(streams), settings));
        } catch (e) {
          part = Promise.reject(e instanceof Error ? e : new FormatError(String(e)));
        }
      } else part = this.pool.encodeIpcSegments(streams, settings);
      part.catch(() => undefined); // awaited in order by add() or finish()
      this.parts.push(part);
      return;
    }
    const group = this.waiting;
    const rows = this.waitingRows;
    this.waiting = [];
    this.waitingRows = 0;
    // Streams turned into Arrow for a split that did not happen may hold a little more than groupRows.
    const { ipc, settings } = prepareParquetInput(group, { ...this.writeOptions, rowGroupSize: Math.max(this.groupRows, rows) });
    let part: Promise<Uint8Array>;
    if (this.pool === null) {
      try {
        part = Promise.resolve(encodeParquetIpc(ipc, settings));
      } catch (e) {
        part = Promise.reject(e instanceof Error ? e : new FormatError(String(e)));
      }
    } else part = this.pool.encodeIpc(ipc, settings);
    part.catch(() => undefined); // awaited in order by add() or finish()
    this.parts.push(part);
  }
}
