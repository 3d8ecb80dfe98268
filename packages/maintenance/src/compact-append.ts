/**
 * Compaction of append tables (docs/format.md, "Append compaction"): per (partition, bucket) of the latest
 * snapshot, small files are packed into windows, each window is rewritten into new level-0 files
 * (`_FILE_SOURCE` = 1, sequence numbers continuing from the window's first file), and everything
 * is committed as one COMPACT snapshot (DELETE inputs, ADD outputs).
 *
 * Concurrency: appends landing meanwhile are fine — the commit is rebased onto them because its
 * inputs are still live. When another commit removed some inputs first (another compaction, an
 * overwrite), the affected windows are dropped, their new files deleted (no snapshot references
 * them), and the rest is committed; when nothing is left the run gives up cleanly.
 */
import { randomUUID } from 'node:crypto';
import {
  BucketDvMaintainer,
  CommitConflictError,
  MaintenanceArgumentError,
  clearInflightFiles,
  recordInflightPrefixes,
  snapshotIndexEntries,
  type DvIndexIncrement,
  MaintenanceError,
  checkAborted,
  TableWrite,
  parsePredicate,
  partitionKey,
  predicateColumns,
  readDataFileSegments,
  withSchema,
  type CommitMessage,
  type DataSplit,
  type PlannedFile,
  type Table,
} from '@tidemark/core';
import {
  BATCH_COMMIT_IDENTIFIER,
  CorruptFileError,
  FILE_SOURCE_COMPACT,
  INDEX_FILE_PREFIX,
  INDEX_TYPE_DELETION_VECTORS,
  readDeletionVectorsAt,
  deserializeBinaryRow,
  sharedParquetWorkerPool,
  parallelRowGroupRows,
  type DataFileMeta,
  type DataType,
  type DeletionVector,
  type TableSchema,
} from '@tidemark/format';
import { compactPickOptions, pickCompactWindows } from './compact-plan.js';
import { anyOutputLive, splitByLiveInputs, type CompactionFiles } from './compaction-liveness.js';

/** Default bound on the input files one run rewrites. */
export const DEFAULT_COMPACT_MAX_FILES_PER_RUN = 1000;

/**
 * Default of {@link CompactAppendOptions.copyRowGroupsMinRows}: the smallest row group the writer
 * cuts a file into for its workers (a file of 131,072 rows or more becomes groups of at least
 * 65,536). Smaller groups come from small files, which are what compaction merges.
 */
export const DEFAULT_COPY_ROW_GROUPS_MIN_ROWS = 65_536;

/** Options of {@link compactAppendTable}. */
export interface CompactAppendOptions {
  /** Only this partition (`{ dt: '2024-05-01' }`, values as in partition directory names). */
  readonly partition?: Readonly<Record<string, string>>;
  /** Only partitions matching this predicate; it may name partition columns only. */
  readonly where?: string;
  /** At most this many input files per run (default {@link DEFAULT_COMPACT_MAX_FILES_PER_RUN}); whole windows only. */
  readonly maxFilesPerRun?: number;
  /** At most this many input bytes per run (default unbounded); whole windows only. */
  readonly maxBytesPerRun?: number;
  /** Rewrite every small file, in windows of two or more (ignores `compaction.min.file-num`). */
  readonly full?: boolean;
  /**
   * Copy the row groups of large inputs into the output as they are, without decoding (default
   * false: every input is decoded and re-encoded, as Paimon does). Much less CPU, but the copied
   * groups keep their size and encoding, so the output is larger than a rewrite's (about a third
   * larger in `benchmarks/results/compact.md`): for tables where compaction is about the number of
   * files more than their bytes. Only inputs whose row groups all hold `copyRowGroupsMinRows` rows,
   * of the table's current schema, without deletion vectors, whose Parquet schema and compression
   * are what the writer would encode, qualify; their statistics in the output's manifest entry
   * come from theirs.
   */
  readonly copyRowGroups?: boolean;
  /**
   * Pass the rows of inputs in the table's current schema (without deletion vectors) from the
   * decode workers to the encode workers as Arrow IPC bytes, their statistics taken from their
   * manifest entries (default true): the calling thread then does not turn each row group into
   * Arrow, evolve it, collect its statistics and serialise it again, which is most of its work.
   * Output rows, row groups and statistics are those of `false`, where every row takes that path.
   */
  readonly passDecodedRows?: boolean;
  /** With {@link copyRowGroups}: the fewest rows of every row group of a copied input (default {@link DEFAULT_COPY_ROW_GROUPS_MIN_ROWS}). */
  readonly copyRowGroupsMinRows?: number;
  /** Plan only: report the windows, write and commit nothing. */
  readonly dryRun?: boolean;
  readonly onProgress?: (progress: CompactProgress) => void;
  /** Aborting stops between files; files written so far are deleted and nothing is committed. */
  readonly signal?: AbortSignal;
  /** Commit user of the COMPACT snapshot (default a fresh UUID). */
  readonly commitUser?: string;
}

/** Progress of a compaction run. */
export interface CompactProgress {
  readonly phase: 'planning' | 'rewriting' | 'committing';
  /** Input files rewritten so far. */
  readonly filesDone: number;
  readonly filesTotal: number;
  readonly bytesRead: number;
  readonly bytesTotal: number;
  readonly bytesWritten: number;
}

/** One planned window: the files of one bucket that are rewritten together. */
export interface CompactWindowPlan {
  readonly partition: Readonly<Record<string, string>>;
  readonly bucket: number;
  readonly files: readonly string[];
  readonly bytes: number;
  readonly rows: number;
}

/** Why (part of) a run was not committed. */
export interface CompactGaveUp {
  readonly reason: string;
  /** Windows dropped because their inputs were no longer live. */
  readonly windows: number;
  /** New data files deleted again (never referenced by a snapshot). */
  readonly outputFilesDeleted: number;
}

/** Result of {@link compactAppendTable}. */
export interface CompactAppendSummary {
  /** Input files replaced (planned ones in a dry run). */
  readonly filesBefore: number;
  /** Output files that replaced them (0 in a dry run). */
  readonly filesAfter: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
  /** Rows rewritten. */
  readonly rows: number;
  /** Distinct partitions with a committed (or, in a dry run, planned) window. */
  readonly partitions: number;
  /** Windows committed (planned in a dry run). */
  readonly windows: number;
  /** Windows left for a later run by `maxFilesPerRun` / `maxBytesPerRun`. */
  readonly remainingWindows: number;
  readonly durationMs: number;
  /** The COMPACT snapshot, or null when nothing was committed. */
  readonly snapshotId: number | null;
  /** Snapshot the plan was made from (null for a table without snapshots). */
  readonly baseSnapshotId: number | null;
  readonly dryRun: boolean;
  /** The planned windows (dry runs only). */
  readonly plan?: readonly CompactWindowPlan[];
  /** Present when windows were dropped because a concurrent commit removed their inputs. */
  readonly gaveUp?: CompactGaveUp;
}

interface Window {
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

/**
 * Compacts the small files of an append table. See the module comment for the concurrency rules.
 *
 * @throws MaintenanceArgumentError for a primary-key table or a `where` naming non-partition columns.
 * @throws MaintenanceAbortedError when `signal` aborts (nothing is committed, new files are deleted).
 */
export async function compactAppendTable(table: Table, options: CompactAppendOptions = {}): Promise<CompactAppendSummary> {
  const started = Date.now();
  const dryRun = options.dryRun ?? false;
  checkAborted(options.signal);
  const schema = await table.schemaManager.latest();
  if (schema.primaryKeys.length > 0) {
    throw new MaintenanceArgumentError(`${table.location} is a primary-key table; compactAppendTable compacts append tables only`);
  }
  const maxFiles = positive(options.maxFilesPerRun, 'maxFilesPerRun') ?? DEFAULT_COMPACT_MAX_FILES_PER_RUN;
  const maxBytes = positive(options.maxBytesPerRun, 'maxBytesPerRun') ?? Number.POSITIVE_INFINITY;
  const minRows = positive(options.copyRowGroupsMinRows, 'copyRowGroupsMinRows') ?? DEFAULT_COPY_ROW_GROUPS_MIN_ROWS;
  const copyMinRows = options.copyRowGroups === true ? minRows : Number.POSITIVE_INFINITY;
  if (options.where !== undefined) {
    const columns = [...predicateColumns(parsePredicate(options.where, schema.fields))];
    const other = columns.filter((c) => !schema.partitionKeys.includes(c));
    if (other.length > 0) {
      throw new MaintenanceArgumentError(
        `compaction 'where' may name partition columns only (${schema.partitionKeys.join(', ') || 'the table has none'}); it names ${other.join(', ')}`,
      );
    }
  }

  // ---- plan ----
  // Every input is decoded and the output encoded on the worker pool: start its threads now so that
  // loading parquet-wasm in them overlaps the planning (about 0.15 s of CPU; they idle unref'd
  // when there turns out to be nothing to compact).
  if (!dryRun) sharedParquetWorkerPool().warm(Number.POSITIVE_INFINITY);
  const plan = await table
    .newRead({
      ...(options.partition !== undefined ? { partition: options.partition } : {}),
      ...(options.where !== undefined ? { where: options.where } : {}),
    })
    .plan();
  const pick = { ...compactPickOptions(schema, options.full ?? false), maxFileNum: maxFiles };
  const all: Window[] = [];
  for (const split of plan.splits) {
    // Files with deletion vectors are rewritten without their deleted rows, and lose their vectors.
    const files = split.files;
    const picked = pickCompactWindows(
      files.map((f) => ({
        f,
        fileSize: f.meta.fileSize,
        minSequenceNumber: f.meta.minSequenceNumber,
        hasDeletionVector: split.deletionFiles.has(f.meta.fileName),
      })),
      pick,
    );
    for (const w of picked) {
      const ws = w.map((x) => x.f);
      all.push({
        split,
        files: ws,
        bytes: ws.reduce((s, f) => s + f.meta.fileSize, 0),
        rows: ws.reduce((s, f) => s + f.meta.rowCount - (split.deletionFiles.get(f.meta.fileName)?.range.cardinality ?? 0), 0),
        outputs: [],
      });
    }
  }
  const windows: Window[] = [];
  let plannedFiles = 0;
  let plannedBytes = 0;
  for (const w of all) {
    if (plannedFiles + w.files.length > maxFiles || plannedBytes + w.bytes > maxBytes) break;
    windows.push(w);
    plannedFiles += w.files.length;
    plannedBytes += w.bytes;
  }
  const remainingWindows = all.length - windows.length;

  const summary = (
    parts: Partial<CompactAppendSummary> & Pick<CompactAppendSummary, 'snapshotId'>,
    done: readonly Window[],
  ): CompactAppendSummary => ({
    filesBefore: done.reduce((s, w) => s + w.files.length, 0),
    filesAfter: done.reduce((s, w) => s + w.outputs.length, 0),
    bytesRead: done.reduce((s, w) => s + w.bytes, 0),
    bytesWritten: done.reduce((s, w) => s + w.outputs.reduce((t, f) => t + f.fileSize, 0), 0),
    rows: done.reduce((s, w) => s + w.rows, 0),
    partitions: new Set(done.map((w) => w.split.partitionPath)).size,
    windows: done.length,
    remainingWindows,
    durationMs: Date.now() - started,
    baseSnapshotId: plan.snapshotId,
    dryRun,
    ...parts,
  });

  if (dryRun) {
    return summary(
      {
        snapshotId: null,
        bytesRead: 0,
        plan: windows.map((w) => ({
          partition: w.split.partitionSpec,
          bucket: w.split.bucket,
          files: w.files.map((f) => f.meta.fileName),
          bytes: w.bytes,
          rows: w.rows,
        })),
      },
      windows,
    );
  }
  if (windows.length === 0) return summary({ snapshotId: null }, []);

  // ---- rewrite ----
  const progress = { filesDone: 0, bytesRead: 0, bytesWritten: 0 };
  const report = (phase: CompactProgress['phase']): void =>
    options.onProgress?.({ phase, ...progress, filesTotal: plannedFiles, bytesTotal: plannedBytes });
  report('rewriting');
  try {
    return await rewriteAndCommit();
  } finally {
    for (const w of windows) await w.writer?.close().catch(() => undefined);
  }

  /**
   * Commits windows whose files had deletion vectors, with the rewritten DV files, in one attempt:
   * a conflict (another commit changed those vectors or files) gives the whole run up cleanly,
   * since vectors changed meanwhile may delete rows the rewrite carried over.
   */
  async function commitWithVectors(dv: DvChanges): Promise<CompactAppendSummary> {
    const commit = table.newCommit({ commitUser: options.commitUser ?? randomUUID() });
    try {
      const result = await commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages: messagesOf(windows, dv.index) });
      return summary({ snapshotId: result.status === 'committed' ? result.snapshotId : null }, windows);
    } catch (e) {
      if (await anyOutputLive(table, windows, outputsOf)) throw e;
      const outputs = windows.reduce((s, w) => s + w.outputs.length, 0);
      await deleteOutputs(table, windows);
      await dv.discard();
      if (!(e instanceof CommitConflictError)) throw e;
      return summary({ snapshotId: null, gaveUp: { reason: e.message, windows: windows.length, outputFilesDeleted: outputs } }, []);
    }
  }

  async function rewriteAndCommit(): Promise<CompactAppendSummary> {
    try {
      for (const w of windows) {
        await rewriteWindow(table, schema, w, options.signal, copyMinRows, options.passDecodedRows ?? true, (file) => {
          progress.filesDone++;
          progress.bytesRead += file.meta.fileSize;
          report('rewriting');
        });
        progress.bytesWritten += w.outputs.reduce((t, f) => t + f.fileSize, 0);
      }
      checkAborted(options.signal);
    } catch (e) {
      await deleteOutputs(table, windows);
      throw e;
    }

    // ---- commit ----
    report('committing');
    const dv = await dropVectorsOf(table, plan.snapshotId, windows);
    if (dv !== null) {
      try {
        return await commitWithVectors(dv);
      } finally {
        await dv.release();
      }
    }
    const commit = table.newCommit({ commitUser: options.commitUser ?? randomUUID() });
    let pending = windows;
    let dropped = 0;
    let droppedOutputs = 0;
    let lastConflict = '';
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages: messagesOf(pending) });
        const snapshotId = result.status === 'committed' ? result.snapshotId : null;
        return summary(
          {
            snapshotId,
            ...(dropped > 0 ? { gaveUp: { reason: lastConflict, windows: dropped, outputFilesDeleted: droppedOutputs } } : {}),
          },
          pending,
        );
      } catch (e) {
        if (!(e instanceof CommitConflictError) || attempt >= 3) {
          // Our files are unreferenced unless a snapshot create had an unknown outcome and landed.
          if (!(await anyOutputLive(table, pending, outputsOf))) await deleteOutputs(table, pending);
          throw e;
        }
        lastConflict = e.message;
        const { keep, lost } = await splitByLiveInputs(table, pending, inputsOf);
        // A conflict that is not about our inputs (should not happen): give up on everything.
        const drop = lost.length === 0 ? keep : lost;
        dropped += drop.length;
        droppedOutputs += drop.reduce((s, w) => s + w.outputs.length, 0);
        await deleteOutputs(table, drop);
        pending = lost.length === 0 ? [] : keep;
        if (pending.length === 0) {
          return summary({ snapshotId: null, gaveUp: { reason: lastConflict, windows: dropped, outputFilesDeleted: droppedOutputs } }, []);
        }
      }
    }
  }
}

/** The deletion-vector changes of a compaction: vectors of rewritten files dropped, per bucket. */
interface DvChanges {
  readonly index: Map<string, DvIndexIncrement>;
  /** Deletes the index files written (when nothing committed them). */
  discard(): Promise<void>;
  /** Clears the in-flight record of the index files. */
  release(): Promise<void>;
}

/**
 * Rewrites the DV index files of the buckets whose compacted files had vectors: the new files
 * hold the bucket's other vectors (bucket-unaware tables: the other vectors of the DV files that
 * held them). Null when no compacted file had a vector.
 */
async function dropVectorsOf(table: Table, snapshotId: number | null, windows: readonly Window[]): Promise<DvChanges | null> {
  const gone = new Map<string, { split: DataSplit; files: Set<string> }>();
  for (const w of windows) {
    for (const f of w.files) {
      if (!w.split.deletionFiles.has(f.meta.fileName)) continue;
      const key = `${w.split.bucket}|${partitionKey(w.split.partition)}`;
      const g = gone.get(key) ?? { split: w.split, files: new Set<string>() };
      g.files.add(f.meta.fileName);
      gone.set(key, g);
    }
  }
  if (gone.size === 0 || snapshotId === null) return null;
  const uuid = randomUUID();
  const prefix = `${INDEX_FILE_PREFIX}${uuid}-`;
  const recordId = `compact-dv-${uuid}`;
  await recordInflightPrefixes(table.fileIO, table.location, recordId, [prefix]);
  const written: string[] = [];
  let n = 0;
  const write = async (bytes: Uint8Array): Promise<string> => {
    const name = `${prefix}${n++}`;
    written.push(name);
    await table.fileIO.write(table.paths.indexPath(name), bytes);
    return name;
  };
  const o = table.context.options;
  const unaware = o.bucket === -1;
  const entries = (await snapshotIndexEntries(table.fileIO, table.paths, await table.snapshotManager.snapshot(snapshotId))).filter(
    (e) => e.indexType === INDEX_TYPE_DELETION_VECTORS,
  );
  const index = new Map<string, DvIndexIncrement>();
  for (const [key, g] of gone) {
    const slot = entries.filter((e) => e.bucket === g.split.bucket && partitionKey(e.partition) === partitionKey(g.split.partition));
    const base = unaware ? slot.filter((e) => (e.dvRanges ?? []).some((r) => g.files.has(r.dataFileName))) : slot;
    const m = await BucketDvMaintainer.restore(table.fileIO, table.paths, base, o.deletionVectorsBitmap64);
    for (const f of g.files) m.removeDeletionVectorOf(f);
    index.set(key, await m.prepareCommit(write, false, unaware ? o.deletionVectorIndexFileTargetSize : undefined));
  }
  return {
    index,
    discard: async () => {
      await table.fileIO.deleteMany(written.map((w) => table.paths.indexPath(w))).catch(() => undefined);
    },
    release: async () => {
      await clearInflightFiles(table.fileIO, table.location, recordId).catch(() => undefined);
    },
  };
}

/** Reads a window's rows (each file with its own schema, mapped to `schema`) and writes them anew. */
async function rewriteWindow(
  table: Table,
  schema: TableSchema,
  w: Window,
  signal: AbortSignal | undefined,
  copyMinRows: number,
  passRows: boolean,
  onFile: (file: PlannedFile) => void,
): Promise<void> {
  const first = w.files.reduce((m, f) => (f.meta.minSequenceNumber < m ? f.meta.minSequenceNumber : m), w.files[0]!.meta.minSequenceNumber);
  const last = w.files.reduce((m, f) => (f.meta.maxSequenceNumber > m ? f.meta.maxSequenceNumber : m), w.files[0]!.meta.maxSequenceNumber);
  const writer = new TableWrite(withSchema(table.context, schema), {
    startSequence: () => first,
    // Output row groups are encoded while later inputs still decode: reading and writing share the cores.
    streamRowGroupRows: outputGroupRows(w.rows),
  });
  let messages: CommitMessage[];
  try {
    // The files' row groups decode on the worker pool ahead of the writer (whose files encode
    // there too), so input and output share both cores; rows keep their order.
    const files = w.files.map((file) => ({
      planned: file,
      path: file.path,
      fileSize: file.meta.fileSize,
      rowCount: file.meta.rowCount,
      schema: file.meta.schemaId === schema.id ? schema : table.schemaManager.schema(file.meta.schemaId),
    }));
    checkAborted(signal);
    // Files are done in order; a file without rows yields no batch and is done with the next one.
    let done = 0;
    const doneUpTo = (end: number): void => {
      for (; done < end; done++) onFile(files[done]!.planned);
    };
    // The window's vectors share its bucket's DV index file(s): one ranged read each, up front.
    const vectors = readDeletionVectorsAt(
      table.fileIO,
      w.files.map((f) => w.split.deletionFiles.get(f.meta.fileName)).filter((r) => r !== undefined),
    );
    vectors.catch(() => undefined); // awaited at the window's first file
    // Inputs in the table's schema go from the decode workers to the encode workers as IPC bytes
    // (their statistics from their manifest entries): this thread only hands them on.
    const passable = (f: (typeof files)[number]): boolean =>
      passRows && f.schema === schema && !w.split.deletionFiles.has(f.planned.meta.fileName);
    const { partition, bucket } = w.split;
    const decode = async (run: readonly (typeof files)[number][]): Promise<void> => {
      let current: (typeof files)[number] | undefined;
      let dv: DeletionVector | null = null;
      let passing = false;
      for await (const group of readDataFileSegments(table.fileIO, run, schema.fields, { keyValue: false, passIpc: passable })) {
        const file = group.file;
        if (file !== current) {
          doneUpTo(files.indexOf(file));
          checkAborted(signal);
          current = file;
          dv = (await vectors).get(file.planned.meta.fileName) ?? null;
          passing = false;
          if (group.ipc !== null) {
            const meta = file.planned.meta;
            const source = {
              rowCount: meta.rowCount,
              fileSize: meta.fileSize,
              valueStats: meta.valueStats,
              valueStatsCols: meta.valueStatsCols,
            };
            passing = writer.ipcFileBlocker(source, group.ipc) === null;
            if (passing) await writer.startIpcFile(partition, bucket, source);
          }
        }
        if (passing) {
          if (group.ipc !== null) await writer.writeIpc(partition, bucket, group.ipc);
          else for (const b of group.batches) await writer.writeIpc(partition, bucket, b.batch);
          continue;
        }
        let firstRow = group.firstRow;
        for (const { batch } of group.ipc !== null ? group.evolve() : group.batches) {
          if (dv === null) {
            await writer.write(batch);
          } else {
            // Runs of rows the vector keeps; deleted rows are not carried over.
            let start = 0;
            for (let i = 0; i <= batch.numRows; i++) {
              if (i < batch.numRows && !dv.isDeleted(firstRow + i)) continue;
              if (i > start) await writer.write(batch.slice(start, i));
              start = i + 1;
            }
          }
          firstRow += batch.numRows;
        }
      }
    };
    // Inputs whose row groups are already as large as a rewrite would cut them are copied without
    // decoding (their bytes read one file ahead); runs of the other files are decoded and written
    // anew. The rows keep their order either way.
    const copyable = (f: (typeof files)[number]): boolean =>
      f.schema === schema &&
      f.rowCount >= copyMinRows &&
      f.path.endsWith('.parquet') &&
      !w.split.deletionFiles.has(f.planned.meta.fileName);
    const reads = new Map<number, Promise<Uint8Array>>();
    const readAhead = (from: number): void => {
      const i = files.findIndex((f, k) => k >= from && copyable(f));
      if (i < 0 || reads.has(i)) return;
      const read = table.fileIO.read(files[i]!.path);
      read.catch(() => undefined); // awaited when the copy comes up
      reads.set(i, read);
    };
    for (let i = 0; i < files.length;) {
      const file = files[i]!;
      if (!copyable(file)) {
        let end = i + 1;
        while (end < files.length && !copyable(files[end]!)) end++;
        readAhead(end);
        await decode(files.slice(i, end));
        i = end;
        continue;
      }
      readAhead(i);
      const bytes = await reads.get(i)!;
      reads.delete(i);
      readAhead(i + 1);
      const meta = file.planned.meta;
      const source = { bytes, rowCount: meta.rowCount, valueStats: meta.valueStats, valueStatsCols: meta.valueStatsCols };
      let blocker: string | null;
      try {
        blocker = await writer.rowGroupCopyBlocker(source, copyMinRows);
      } catch (e) {
        throw new CorruptFileError(file.path, `cannot read the Parquet footer: ${(e as Error).message}`, { cause: e });
      }
      if (blocker === null) {
        doneUpTo(i);
        checkAborted(signal);
        await writer.writeRowGroupsOf(w.split.partition, w.split.bucket, source);
      } else await decode([file]);
      i++;
    }
    doneUpTo(files.length);
    messages = await writer.prepareCommit();
  } catch (e) {
    await writer.abort().catch(() => undefined);
    await writer.close().catch(() => undefined);
    throw e;
  }
  w.writer = writer;
  const outputs = messages.flatMap((m) => m.newFiles);
  w.outputs = outputs.map((f) => ({ ...f, fileSource: FILE_SOURCE_COMPACT }));
  const where = `${table.location}: compaction of bucket ${w.split.bucket} of partition '${w.split.partitionPath}'`;
  const wrong = messages.find((m) => m.bucket !== w.split.bucket || !samePartition(m.partition, w.split.partition, schema));
  if (wrong !== undefined) {
    throw new MaintenanceError(
      `${where} routed rows to bucket ${wrong.bucket} (was the bucket key or bucket count changed?); nothing was committed`,
    );
  }
  const rows = outputs.reduce((s, f) => s + f.rowCount, 0);
  if (rows !== w.rows) throw new MaintenanceError(`${where} wrote ${rows} rows for ${w.rows} input rows; nothing was committed`);
  // The outputs cover the inputs' whole sequence range, so later writers continue after it.
  const tail = w.outputs[w.outputs.length - 1];
  if (tail !== undefined && tail.maxSequenceNumber < last) w.outputs[w.outputs.length - 1] = { ...tail, maxSequenceNumber: last };
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

/** One commit message per (partition, bucket), in the manifest's partition bytes. */
function messagesOf(windows: readonly Window[], index: ReadonlyMap<string, DvIndexIncrement> = new Map()): CommitMessage[] {
  const byBucket = new Map<
    string,
    { partition: Uint8Array; bucket: number; totalBuckets: number; before: DataFileMeta[]; after: DataFileMeta[] }
  >();
  for (const w of windows) {
    const key = `${w.split.bucket}|${partitionKey(w.split.partition)}`;
    let m = byBucket.get(key);
    if (m === undefined) {
      m = { partition: w.split.partition, bucket: w.split.bucket, totalBuckets: w.split.totalBuckets, before: [], after: [] };
      byBucket.set(key, m);
    }
    m.before.push(...w.files.map((f) => f.meta));
    m.after.push(...w.outputs);
  }
  return [...byBucket.entries()].map(([key, m]) => {
    const inc = index.get(key);
    return {
      partition: m.partition,
      bucket: m.bucket,
      totalBuckets: m.totalBuckets,
      newFiles: [],
      compactBefore: m.before,
      compactAfter: m.after,
      ...(inc !== undefined ? { compactNewIndexFiles: inc.newIndexFiles, compactDeletedIndexFiles: inc.deletedIndexFiles } : {}),
    };
  });
}

/** What the shared liveness checks look at: the files a window read, and the files it wrote. */
function inputsOf(w: Window): CompactionFiles {
  return { split: w.split, files: w.files.map((f) => f.meta) };
}
function outputsOf(w: Window): CompactionFiles {
  return { split: w.split, files: w.outputs };
}

async function deleteOutputs(table: Table, windows: readonly Window[]): Promise<void> {
  const paths = windows.flatMap((w) => w.outputs.map((f) => table.paths.dataFilePath(w.split.partitionPath, w.split.bucket, f.fileName)));
  for (const w of windows) w.outputs = [];
  if (paths.length > 0) await table.fileIO.deleteMany(paths).catch(() => undefined);
}

function positive(v: number | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!(v > 0) || (Number.isFinite(v) && !Number.isInteger(v)))
    throw new MaintenanceArgumentError(`${name} must be a positive integer, got ${v}`);
  return v;
}
