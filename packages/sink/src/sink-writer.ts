/**
 * `SinkWriter`: one parallel writer of a sink pipeline. Buffers rows into data files through the
 * table's writer ({@link Table.newBatchWrite}) and, at each checkpoint, hands the files it wrote
 * since the previous checkpoint to the committer.
 *
 * On a primary-key table the writer compacts its buckets as every table writer does (unless the
 * table is `write-only`): the committable then carries the compaction too (compactBefore /
 * compactAfter, its changelog and deletion-vector index files), committed as a COMPACT snapshot
 * after the checkpoint's APPEND one. The writer keeps its buckets' levels in memory between
 * checkpoints; it keeps nothing durable: after a restart the source is replayed from the
 * checkpointed offset and a fresh writer builds its levels from the latest snapshot.
 */
import { Table, TableWrite, tableContext, type RowObject, type TableWriteOptions, type WriteInput } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import type { TableSchema } from '@tidemark/format';
import type { SinkCommittable } from './committable.js';
import { NO_CRASH, type CrashHook } from './crash-points.js';

/** Options of a {@link SinkWriter}: the table writer options plus crash injection. */
export interface SinkWriterOptions extends TableWriteOptions {
  /** Crash injection (tests). */
  readonly crash?: CrashHook;
  /**
   * Primary-key tables: compact the buckets in this writer (default true; never when the table is
   * `write-only`). Writers that share buckets must not: each would compact the same live files.
   */
  readonly compact?: boolean;
}

/** One parallel writer of a sink pipeline; see the module comment. */
export class SinkWriter {
  private readonly write_: TableWrite;
  private readonly crash: CrashHook;
  /** This writer's index (0 … parallelism-1). */
  readonly writerId: number;
  private rows = 0;

  /** A writer of `table` (its storage, location and the schema it was opened with). */
  constructor(table: Table, writerId: number, options?: SinkWriterOptions);
  /** A writer of the table at `tableLocation`, writing with `schema`. */
  constructor(fileIO: FileIO, tableLocation: string, schema: TableSchema, writerId: number, options?: SinkWriterOptions);
  constructor(
    first: Table | FileIO,
    second: number | string,
    third?: SinkWriterOptions | TableSchema,
    fourth?: number,
    fifth: SinkWriterOptions = {},
  ) {
    let table: Table;
    let options: SinkWriterOptions;
    if (first instanceof Table) {
      table = first;
      this.writerId = second as number;
      options = (third as SinkWriterOptions | undefined) ?? {};
    } else {
      table = Table.forContext(tableContext(first, second as string, third as TableSchema));
      this.writerId = fourth!;
      options = fifth;
    }
    const { crash, compact, ...writeOptions } = options;
    // The table's own writer construction: primary-key buckets compact as in every other writer.
    this.write_ = compact === false ? new TableWrite(table.context, writeOptions) : table.newBatchWrite(writeOptions);
    this.crash = crash ?? NO_CRASH;
  }

  /** Rows written since the last {@link prepareCommit}. */
  get pendingRows(): number {
    return this.rows;
  }

  /** Buffers rows (may write data files). Validation errors name the column and row. */
  async write(records: WriteInput | readonly RowObject[]): Promise<void> {
    await this.write_.write(records);
    this.rows += Array.isArray(records) ? records.length : (records as { numRows: number }).numRows;
  }

  /**
   * Flushes every buffered row to data files (and, on primary-key tables, finishes the buckets'
   * compactions) and returns them as the committable of `checkpointId`. Nothing becomes visible
   * until the committer commits it.
   */
  async prepareCommit(checkpointId: bigint): Promise<SinkCommittable> {
    const messages = await this.write_.prepareCommit();
    this.crash.hit('after-file-flush');
    this.rows = 0;
    return { checkpointId, writerId: this.writerId, messages };
  }

  /**
   * Has the next {@link prepareCommit} compact these (partition, bucket)s from the table even
   * without new rows (see `TableWrite.compactBuckets`).
   */
  async compactBuckets(buckets: Iterable<{ readonly partition: Uint8Array; readonly bucket: number }>): Promise<void> {
    await this.write_.compactBuckets(buckets);
  }

  /** Deletes the files written since the last prepareCommit and drops buffered rows. */
  async abort(): Promise<void> {
    await this.write_.abort();
    this.rows = 0;
  }

  async close(): Promise<void> {
    await this.write_.close();
  }
}
