/**
 * Streaming merge-read of primary-key files for compaction. Each sorted run of a section is read
 * file after file, one batch at a time; the runs advance together in key windows: a window ends at
 * the smallest last key among the runs' current batches, so it holds every record of its keys
 * (from all runs) and nothing beyond. Each window is merged on its own by the table's merge
 * engine. Memory is about two batches per run of the section being merged, whatever the size of
 * the bucket.
 */
import type * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import type { DataField, DataFileMeta, DeletionVector, TableSchema, Value } from '@tidemark/format';
import { takeRows } from '../read/arrow-take.js';
import { valueReader } from '../read/arrow-values.js';
import { readDataFile } from '../read/data-file-reader.js';
import { compareKeys } from '../key-order.js';
import type { SortedRun } from './sorted-run.js';
import { CompactionAbortedError } from './compact-errors.js';

/** Rows of primary-key records as Arrow columns (the read fields), sequence numbers and row kinds. */
export interface KeyValueSegment {
  readonly columns: readonly arrow.Data[];
  readonly sequence: BigInt64Array;
  readonly kinds: Int8Array;
  readonly rows: number;
  /** LSM level of the file the records come from (changelog producers tell old from new by it). */
  readonly level?: number;
}

/**
 * Merges one window: the records of a set of keys, given as segments (each segment in key order;
 * together they hold every record of those keys). Returns one row per surviving key, in key
 * order, or null when nothing survives.
 */
export type WindowMerge = (segments: readonly KeyValueSegment[]) => KeyValueSegment | null | Promise<KeyValueSegment | null>;

/** Where files are and how to read them. */
export interface MergeReadContext {
  readonly fileIO: FileIO;
  /** Full location of a data file of the bucket from its name (`_EXTERNAL_PATH` wins when set). */
  pathOf(fileName: string): string;
  schemaOf(id: number): Promise<TableSchema>;
  /** Fields the records hold, in order (the table's current fields). */
  readonly readFields: readonly DataField[];
  /** Positions in `readFields` of the trimmed primary key. */
  readonly keyPositions: readonly number[];
  /** Rows per batch read from a file (default 8192). */
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
  /** Called with each input file once it has been read through. */
  readonly onFileRead?: (file: DataFileMeta) => void;
  /** Deletion-vector tables: the vector of a data file; its rows are skipped. */
  deletionVectorOf?(fileName: string): DeletionVector | undefined;
}

const DEFAULT_BATCH = 8192;

interface Batch {
  readonly columns: readonly arrow.Data[];
  readonly sequence: BigInt64Array;
  readonly kinds: Int8Array;
  readonly rows: number;
  readonly level: number;
  key(row: number): Value[];
}

/** Reads a sorted run batch by batch. */
class RunCursor {
  private fileIndex = 0;
  /** Row position in the current file of the next batch's first row. */
  private filePosition = 0;
  private deletionVector: DeletionVector | undefined;
  private batches: AsyncGenerator<{ batch: arrow.RecordBatch; sequence: BigInt64Array | null; valueKind: Int8Array | null }> | null = null;
  /** Current batch (null once the run is exhausted) and the first row not yet taken. */
  batch: Batch | null = null;
  position = 0;

  constructor(
    private readonly ctx: MergeReadContext,
    private readonly run: SortedRun,
  ) {}

  /** Loads the next non-empty batch; false at the end of the run. */
  async next(): Promise<boolean> {
    for (;;) {
      if (this.ctx.signal?.aborted) throw new CompactionAbortedError('compaction aborted');
      if (this.batches === null) {
        const file = this.run.files[this.fileIndex];
        if (file === undefined) {
          this.batch = null;
          return false;
        }
        const schema = await this.ctx.schemaOf(file.schemaId);
        this.filePosition = 0;
        this.deletionVector = this.ctx.deletionVectorOf?.(file.fileName);
        const path = file.externalPath || this.ctx.pathOf(file.fileName);
        this.batches = readDataFile(this.ctx.fileIO, { path, fileSize: file.fileSize, schema }, this.ctx.readFields, {
          keyValue: true,
          batchSize: this.ctx.batchSize ?? DEFAULT_BATCH,
        });
      }
      const next = await this.batches.next();
      if (next.done) {
        this.ctx.onFileRead?.(this.run.files[this.fileIndex]!);
        this.batches = null;
        this.fileIndex++;
        continue;
      }
      const { batch } = next.value;
      let { sequence, valueKind } = next.value;
      const start = this.filePosition;
      this.filePosition += batch.numRows;
      if (batch.numRows === 0) continue;
      let columns = batch.data.children;
      let rows = batch.numRows;
      const dv = this.deletionVector;
      if (dv !== undefined && dv.cardinality > 0) {
        // Rows replaced by newer records elsewhere must not come back through the merge.
        const keep: number[] = [];
        for (let i = 0; i < rows; i++) if (!dv.isDeleted(start + i)) keep.push(i);
        if (keep.length === 0) continue;
        if (keep.length < rows) {
          columns = columns.map((c) => takeRows(c, keep));
          sequence = BigInt64Array.from(keep, (i) => sequence![i]!);
          valueKind = Int8Array.from(keep, (i) => valueKind![i]!);
          rows = keep.length;
        }
      }
      const readers = this.ctx.keyPositions.map((p) => valueReader(columns[p]!, this.ctx.readFields[p]!.type));
      const level = this.run.files[this.fileIndex]!.level;
      this.batch = {
        columns,
        sequence: sequence!,
        kinds: valueKind!,
        rows,
        level,
        key: (r) => readers.map((read) => read(r)),
      };
      this.position = 0;
      return true;
    }
  }

  async close(): Promise<void> {
    await this.batches?.return(undefined);
    this.batches = null;
  }
}

/**
 * Merges the sections (each a list of sorted runs; sections key-disjoint and in key order) window
 * by window with `merge`, yielding the merged rows in key order.
 */
export async function* mergeSections(
  ctx: MergeReadContext,
  sections: readonly (readonly SortedRun[])[],
  merge: WindowMerge,
): AsyncGenerator<KeyValueSegment> {
  for (const section of sections) {
    const cursors = section.map((run) => new RunCursor(ctx, run));
    try {
      const active: RunCursor[] = [];
      for (const c of cursors) if (await c.next()) active.push(c);
      while (active.length > 0) {
        // Every record with a key up to the smallest last key of the current batches is loaded.
        let bound: Value[] | null = null;
        for (const c of active) {
          const last = c.batch!.key(c.batch!.rows - 1);
          if (bound === null || compareKeys(last, bound) < 0) bound = last;
        }
        const segments: KeyValueSegment[] = [];
        for (let i = 0; i < active.length; i++) {
          const c = active[i]!;
          // A run may hold more records of the bound key in its next batch: keep taking.
          for (;;) {
            const b = c.batch!;
            const end = upperBound(b, c.position, bound!);
            if (end > c.position) segments.push(slice(b, c.position, end));
            c.position = end;
            if (end < b.rows) break;
            if (!(await c.next())) {
              active.splice(i--, 1);
              break;
            }
          }
        }
        const out = await merge(segments);
        if (out !== null && out.rows > 0) yield out;
      }
    } finally {
      for (const c of cursors) await c.close().catch(() => undefined);
    }
  }
}

/** First row at or after `from` whose key is greater than `bound` (rows are in key order). */
function upperBound(b: Batch, from: number, bound: readonly Value[]): number {
  let lo = from;
  let hi = b.rows;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(b.key(mid), bound) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function slice(b: Batch, start: number, end: number): KeyValueSegment {
  if (start === 0 && end === b.rows) return { columns: b.columns, sequence: b.sequence, kinds: b.kinds, rows: b.rows, level: b.level };
  return {
    columns: b.columns.map((c) => c.slice(start, end - start)),
    sequence: b.sequence.subarray(start, end),
    kinds: b.kinds.subarray(start, end),
    rows: end - start,
    level: b.level,
  };
}
