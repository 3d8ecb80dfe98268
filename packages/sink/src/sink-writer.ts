/**
 * `SinkWriter`: one parallel writer of a sink pipeline. Buffers rows into data files through a
 * {@link TableWrite} and, at each checkpoint, hands the files it wrote since the previous
 * checkpoint to the committer. It keeps no durable state: after a restart the source is replayed
 * from the checkpointed offset and a fresh writer writes fresh files.
 */
import { TableWrite, type RowObject, type TableWriteOptions, type WriteInput } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import type { TableSchema } from '@tidemark/format';
import type { SinkCommittable } from './committable.js';
import { NO_CRASH, type CrashHook } from './crash-points.js';

/** Options of a {@link SinkWriter}: the table writer options plus crash injection. */
export interface SinkWriterOptions extends TableWriteOptions {
  /** Crash injection (tests). */
  readonly crash?: CrashHook;
}

/** One parallel writer of a sink pipeline; see the module comment. */
export class SinkWriter {
  private readonly write_: TableWrite;
  private readonly crash: CrashHook;
  private rows = 0;

  constructor(
    fileIO: FileIO,
    tableLocation: string,
    schema: TableSchema,
    /** This writer's index (0 … parallelism-1). */
    readonly writerId: number,
    options: SinkWriterOptions = {},
  ) {
    const { crash, ...writeOptions } = options;
    this.write_ = new TableWrite(fileIO, tableLocation, schema, writeOptions);
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
   * Flushes every buffered row to data files and returns them as the committable of
   * `checkpointId`. Nothing becomes visible until the committer commits it.
   */
  async prepareCommit(checkpointId: bigint): Promise<SinkCommittable> {
    const messages = await this.write_.prepareCommit();
    this.crash.hit('after-file-flush');
    this.rows = 0;
    return { checkpointId, writerId: this.writerId, messages };
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
