/**
 * The rewrite of one append-compaction window (compact-append.ts): its files' rows, each file in
 * its own schema mapped to the table's, written anew into level-0 files whose sequence numbers
 * continue from the window's first file. Large inputs may have their row groups copied as they
 * are, inputs in the table's schema pass from decode to encode workers as IPC bytes, and rows a
 * deletion vector deletes are left out.
 */
import {
  MaintenanceError,
  TableWrite,
  checkAborted,
  readDataFileSegments,
  withSchema,
  type CommitMessage,
  type DataFileSegment,
  type DataSplit,
  type EvolvedBatch,
  type PlannedFile,
  type Table,
} from '@tidemark/core';
import {
  CorruptFileError,
  FILE_SOURCE_COMPACT,
  deserializeBinaryRow,
  parallelRowGroupRows,
  readDeletionVectorsAt,
  sharedParquetWorkerPool,
  type DataFileMeta,
  type DataType,
  type DeletionVector,
  type TableSchema,
} from '@tidemark/format';

/** One planned window: files of one bucket rewritten together, and what the rewrite wrote. */
export interface Window {
  readonly split: DataSplit;
  readonly files: readonly PlannedFile[];
  readonly bytes: number;
  /** Live rows of the window: its files' rows minus those their deletion vectors delete. */
  readonly rows: number;
  outputs: DataFileMeta[];
  /**
   * The writer of `outputs`, kept open until the COMPACT commit is decided: its in-flight record
   * keeps orphan cleanup away from the outputs until a snapshot references them.
   */
  writer?: TableWrite;
}

/** How a window is rewritten. */
export interface WindowRewriteOptions {
  readonly signal: AbortSignal | undefined;
  /** Inputs whose row groups all hold this many rows are copied without decoding (infinity: never). */
  readonly copyMinRows: number;
  /** Pass inputs in the table's schema from decode to encode workers as IPC bytes. */
  readonly passRows: boolean;
  /** Called for each input file once it is done, in order. */
  readonly onFile: (file: PlannedFile) => void;
}

/**
 * Reads a window's rows (each file with its own schema, mapped to `schema`) and writes them anew;
 * sets `w.outputs` and `w.writer`. On failure the writer is aborted and closed.
 */
export async function rewriteWindow(table: Table, schema: TableSchema, w: Window, options: WindowRewriteOptions): Promise<void> {
  const first = w.files.reduce((m, f) => (f.meta.minSequenceNumber < m ? f.meta.minSequenceNumber : m), w.files[0]!.meta.minSequenceNumber);
  const last = w.files.reduce((m, f) => (f.meta.maxSequenceNumber > m ? f.meta.maxSequenceNumber : m), w.files[0]!.meta.maxSequenceNumber);
  const writer = new TableWrite(withSchema(table.context, schema), {
    startSequence: () => first,
    // Output row groups are encoded while later inputs still decode: reading and writing share the cores.
    streamRowGroupRows: outputGroupRows(w.rows),
  });
  let messages: CommitMessage[];
  try {
    messages = await new WindowRewrite(table, schema, w, writer, options).run();
  } catch (e) {
    await writer.abort().catch(() => undefined);
    await writer.close().catch(() => undefined);
    throw e;
  }
  w.writer = writer;
  w.outputs = checkedOutputs(table, schema, w, messages, last);
}

/** An input file of a window, with the schema it was written in. */
interface WindowInput {
  readonly planned: PlannedFile;
  readonly path: string;
  readonly fileSize: number;
  readonly rowCount: number;
  readonly schema: TableSchema | Promise<TableSchema>;
}

/**
 * The files of one window in order: runs of files that must be decoded go through the decode
 * workers (their row groups ahead of the writer, whose files encode there too, so input and output
 * share both cores); a file whose row groups are as large as a rewrite would cut them is copied
 * (its bytes read one file ahead). Rows keep their order either way.
 */
class WindowRewrite {
  private readonly files: readonly WindowInput[];
  /** The window's vectors: they share the bucket's DV index file(s), one ranged read each, up front. */
  private readonly vectors: Promise<Map<string, DeletionVector>>;
  /** Files before this index have been reported done. */
  private done = 0;
  private readonly reads = new Map<number, Promise<Uint8Array>>();

  constructor(
    private readonly table: Table,
    private readonly schema: TableSchema,
    private readonly w: Window,
    private readonly writer: TableWrite,
    private readonly options: WindowRewriteOptions,
  ) {
    this.files = w.files.map((file) => ({
      planned: file,
      path: file.path,
      fileSize: file.meta.fileSize,
      rowCount: file.meta.rowCount,
      schema: file.meta.schemaId === schema.id ? schema : table.schemaManager.schema(file.meta.schemaId),
    }));
    this.vectors = readDeletionVectorsAt(
      table.fileIO,
      w.files.map((f) => w.split.deletionFiles.get(f.meta.fileName)).filter((r) => r !== undefined),
    );
    this.vectors.catch(() => undefined); // awaited at the window's first file
  }

  async run(): Promise<CommitMessage[]> {
    const { files } = this;
    checkAborted(this.options.signal);
    for (let i = 0; i < files.length;) {
      if (!this.copyable(files[i]!)) {
        let end = i + 1;
        while (end < files.length && !this.copyable(files[end]!)) end++;
        this.readAhead(end);
        await this.decode(files.slice(i, end));
        i = end;
        continue;
      }
      await this.copyOrDecode(i);
      i++;
    }
    this.doneUpTo(files.length);
    return this.writer.prepareCommit();
  }

  private hasVector(f: WindowInput): boolean {
    return this.w.split.deletionFiles.has(f.planned.meta.fileName);
  }

  /** Whether an input may be copied: in the table's schema, large enough, Parquet, no vector. */
  private copyable(f: WindowInput): boolean {
    return f.schema === this.schema && f.rowCount >= this.options.copyMinRows && f.path.endsWith('.parquet') && !this.hasVector(f);
  }

  /** Whether an input's rows may pass as IPC bytes (their statistics then come from its manifest entry). */
  private passable(f: WindowInput): boolean {
    return this.options.passRows && f.schema === this.schema && !this.hasVector(f);
  }

  /** Reports the files before `end` done (a file without rows yields no batch and is done with the next one). */
  private doneUpTo(end: number): void {
    for (; this.done < end; this.done++) this.options.onFile(this.files[this.done]!.planned);
  }

  /** Starts reading the bytes of the next copyable file from `from` on. */
  private readAhead(from: number): void {
    const i = this.files.findIndex((f, k) => k >= from && this.copyable(f));
    if (i < 0 || this.reads.has(i)) return;
    const read = this.table.fileIO.read(this.files[i]!.path);
    read.catch(() => undefined); // awaited when the copy comes up
    this.reads.set(i, read);
  }

  /** Copies file `i`'s row groups when the writer can take them as they are, else decodes it. */
  private async copyOrDecode(i: number): Promise<void> {
    const file = this.files[i]!;
    this.readAhead(i);
    const bytes = await this.reads.get(i)!;
    this.reads.delete(i);
    this.readAhead(i + 1);
    const meta = file.planned.meta;
    const source = { bytes, rowCount: meta.rowCount, valueStats: meta.valueStats, valueStatsCols: meta.valueStatsCols };
    let blocker: string | null;
    try {
      blocker = await this.writer.rowGroupCopyBlocker(source, this.options.copyMinRows);
    } catch (e) {
      throw new CorruptFileError(file.path, `cannot read the Parquet footer: ${(e as Error).message}`, { cause: e });
    }
    if (blocker !== null) return this.decode([file]);
    this.doneUpTo(i);
    checkAborted(this.options.signal);
    await this.writer.writeRowGroupsOf(this.w.split.partition, this.w.split.bucket, source);
  }

  /** Decodes a run of files on the workers and writes their rows. */
  private async decode(run: readonly WindowInput[]): Promise<void> {
    const segments = readDataFileSegments(this.table.fileIO, run, this.schema.fields, {
      keyValue: false,
      passIpc: (f) => this.passable(f),
    });
    let current: WindowInput | undefined;
    let dv: DeletionVector | null = null;
    let passing = false;
    for await (const group of segments) {
      if (group.file !== current) {
        current = group.file;
        this.doneUpTo(this.files.indexOf(current));
        checkAborted(this.options.signal);
        dv = (await this.vectors).get(current.planned.meta.fileName) ?? null;
        passing = group.ipc !== null && (await this.startPassing(current, group.ipc));
      }
      if (passing) await this.pass(group);
      else await this.writeRows(group, dv);
    }
  }

  /** Starts an output file for the IPC bytes of `file` when the writer can take them; false when not. */
  private async startPassing(file: WindowInput, ipc: NonNullable<DataFileSegment['ipc']>): Promise<boolean> {
    const meta = file.planned.meta;
    const source = { rowCount: meta.rowCount, fileSize: meta.fileSize, valueStats: meta.valueStats, valueStatsCols: meta.valueStatsCols };
    if (this.writer.ipcFileBlocker(source, ipc) !== null) return false;
    await this.writer.startIpcFile(this.w.split.partition, this.w.split.bucket, source);
    return true;
  }

  /** Hands a row group on as IPC bytes. */
  private async pass(group: DataFileSegment<WindowInput>): Promise<void> {
    const { partition, bucket } = this.w.split;
    if (group.ipc !== null) await this.writer.writeIpc(partition, bucket, group.ipc);
    else for (const b of group.batches) await this.writer.writeIpc(partition, bucket, b.batch);
  }

  /** Writes a row group's rows, without those the file's vector deletes. */
  private async writeRows(group: DataFileSegment<WindowInput>, dv: DeletionVector | null): Promise<void> {
    let firstRow = group.firstRow;
    for (const { batch } of group.ipc !== null ? group.evolve() : group.batches) {
      if (dv === null) await this.writer.write(batch);
      else await this.writeKept(batch, firstRow, dv);
      firstRow += batch.numRows;
    }
  }

  /** Writes the runs of rows the vector keeps; deleted rows are not carried over. */
  private async writeKept(batch: EvolvedBatch['batch'], firstRow: number, dv: DeletionVector): Promise<void> {
    let start = 0;
    for (let i = 0; i <= batch.numRows; i++) {
      if (i < batch.numRows && !dv.isDeleted(firstRow + i)) continue;
      if (i > start) await this.writer.write(batch.slice(start, i));
      start = i + 1;
    }
  }
}

/**
 * The window's outputs, marked as compaction output, after checking the writer kept the rows in
 * the window's bucket and wrote every live input row; the last one's sequence range is stretched
 * to the inputs' `last`, so that later writers continue after it.
 */
function checkedOutputs(table: Table, schema: TableSchema, w: Window, messages: readonly CommitMessage[], last: bigint): DataFileMeta[] {
  const outputs = messages.flatMap((m) => m.newFiles).map((f) => ({ ...f, fileSource: FILE_SOURCE_COMPACT }));
  const where = `${table.location}: compaction of bucket ${w.split.bucket} of partition '${w.split.partitionPath}'`;
  const wrong = messages.find((m) => m.bucket !== w.split.bucket || !samePartition(m.partition, w.split.partition, schema));
  if (wrong !== undefined) {
    throw new MaintenanceError(
      `${where} routed rows to bucket ${wrong.bucket} (was the bucket key or bucket count changed?); nothing was committed`,
    );
  }
  const rows = outputs.reduce((s, f) => s + f.rowCount, 0);
  if (rows !== w.rows) throw new MaintenanceError(`${where} wrote ${rows} rows for ${w.rows} input rows; nothing was committed`);
  const tail = outputs[outputs.length - 1];
  if (tail !== undefined && tail.maxSequenceNumber < last) outputs[outputs.length - 1] = { ...tail, maxSequenceNumber: last };
  return outputs;
}

/**
 * Rows per row group of a window's output: the groups the writer would cut for the workers had it
 * all rows at once ({@link parallelRowGroupRows}: one per worker, at least about 131,072 rows,
 * equal sizes), so the output's layout and size are what they were when the whole window was
 * buffered first; only now the first groups encode while the window's later files still decode.
 * Smaller groups would overlap more, but every group pays its own dictionary pages: 8 groups of
 * 125,000 rows instead of 2 of 500,000 made a 1M-row output 29 % larger and took more CPU time.
 */
export function outputGroupRows(rows: number, workers = sharedParquetWorkerPool().size): number {
  return parallelRowGroupRows(rows, workers);
}

function samePartition(a: Uint8Array, b: Uint8Array, schema: TableSchema): boolean {
  if (Buffer.compare(a, b) === 0) return true;
  const types: DataType[] = schema.partitionKeys.map((k) => schema.fields.find((f) => f.name === k)!.type);
  const json = (p: Uint8Array): string =>
    JSON.stringify(deserializeBinaryRow(p, types), (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
    );
  return json(a) === json(b);
}
