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
  MaintenanceArgumentError,
  checkAborted,
  partitionKey,
  type CommitMessage,
  type DataSplit,
  type DvIndexIncrement,
  type Table,
} from '@tidemark/core';
import { sharedParquetWorkerPool, type DataFileMeta, type TableSchema } from '@tidemark/format';
import { outputGroupRows, rewriteWindow, type Window } from './append-window-rewrite.js';
import { compactPickOptions, pickCompactWindows } from './compact-plan.js';
import {
  CompactionProgress,
  checkPartitionWhere,
  commitAllOrNothing,
  commitDroppingLost,
  deletionVectorEntries,
  planCompaction,
  runIndexFiles,
  type CompactGaveUp,
  type CompactProgress,
  type CompactionCommitOutcome,
  type CompactionUnits,
  type RunIndexFiles,
} from './compaction-run.js';

export { outputGroupRows };
export type { CompactGaveUp, CompactProgress };

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

/** One planned window: the files of one bucket that are rewritten together. */
export interface CompactWindowPlan {
  readonly partition: Readonly<Record<string, string>>;
  readonly bucket: number;
  readonly files: readonly string[];
  readonly bytes: number;
  readonly rows: number;
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

/** What every step of one run reads: the table, its latest schema and the run's bounds. */
interface AppendCompactionRun {
  readonly table: Table;
  readonly options: CompactAppendOptions;
  readonly schema: TableSchema;
  readonly maxFiles: number;
  readonly maxBytes: number;
  /** Inputs whose row groups all hold this many rows are copied (infinity without `copyRowGroups`). */
  readonly copyMinRows: number;
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
  const run = await openRun(table, options);
  // Every input is decoded and the output encoded on the worker pool: start its threads now so that
  // loading parquet-wasm in them overlaps the planning (about 0.15 s of CPU; they idle unref'd
  // when there turns out to be nothing to compact).
  if (!dryRun) sharedParquetWorkerPool().warm(Number.POSITIVE_INFINITY);
  const plan = await planCompaction(table, options);
  const all = planWindows(run, plan.splits);
  const windows = firstWindowsWithin(all, run.maxFiles, run.maxBytes);
  const summary = (parts: SummaryParts, done: readonly Window[]): CompactAppendSummary =>
    summarize(parts, done, { started, remainingWindows: all.length - windows.length, baseSnapshotId: plan.snapshotId, dryRun });
  if (dryRun) return summary({ snapshotId: null, bytesRead: 0, plan: windows.map(windowPlan) }, windows);
  if (windows.length === 0) return summary({ snapshotId: null }, []);

  const progress = new CompactionProgress(
    options.onProgress,
    windows.reduce((s, w) => s + w.files.length, 0),
    windows.reduce((s, w) => s + w.bytes, 0),
  );
  progress.report('rewriting');
  try {
    await rewriteWindows(run, windows, progress);
    progress.report('committing');
    const { snapshotId, committed, gaveUp } = await commitWindows(run, plan.snapshotId, windows);
    return summary({ snapshotId, ...(gaveUp !== undefined ? { gaveUp } : {}) }, committed);
  } finally {
    for (const w of windows) await w.writer?.close().catch(() => undefined);
  }
}

/** Reads the latest schema and the bounds of the run; refuses tables and options it cannot compact. */
async function openRun(table: Table, options: CompactAppendOptions): Promise<AppendCompactionRun> {
  const schema = await table.schemaManager.latest();
  if (schema.primaryKeys.length > 0) {
    throw new MaintenanceArgumentError(`${table.location} is a primary-key table; compactAppendTable compacts append tables only`);
  }
  const maxFiles = positive(options.maxFilesPerRun, 'maxFilesPerRun') ?? DEFAULT_COMPACT_MAX_FILES_PER_RUN;
  const maxBytes = positive(options.maxBytesPerRun, 'maxBytesPerRun') ?? Number.POSITIVE_INFINITY;
  const minRows = positive(options.copyRowGroupsMinRows, 'copyRowGroupsMinRows') ?? DEFAULT_COPY_ROW_GROUPS_MIN_ROWS;
  checkPartitionWhere(schema, options.where);
  return { table, options, schema, maxFiles, maxBytes, copyMinRows: options.copyRowGroups === true ? minRows : Number.POSITIVE_INFINITY };
}

/** Packs each split's small files into windows (files with deletion vectors lose them in the rewrite). */
function planWindows(run: AppendCompactionRun, splits: readonly DataSplit[]): Window[] {
  const pick = { ...compactPickOptions(run.schema, run.options.full ?? false), maxFileNum: run.maxFiles };
  const all: Window[] = [];
  for (const split of splits) {
    const picked = pickCompactWindows(
      split.files.map((f) => ({
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
  return all;
}

/** The first windows within the run's bounds on files and bytes (whole windows only). */
function firstWindowsWithin(all: readonly Window[], maxFiles: number, maxBytes: number): Window[] {
  const windows: Window[] = [];
  let files = 0;
  let bytes = 0;
  for (const w of all) {
    if (files + w.files.length > maxFiles || bytes + w.bytes > maxBytes) break;
    windows.push(w);
    files += w.files.length;
    bytes += w.bytes;
  }
  return windows;
}

type SummaryParts = Partial<CompactAppendSummary> & Pick<CompactAppendSummary, 'snapshotId'>;

/** The summary of the windows `done` (committed ones, or planned ones in a dry run), with `parts` on top. */
function summarize(
  parts: SummaryParts,
  done: readonly Window[],
  run: { readonly started: number; readonly remainingWindows: number; readonly baseSnapshotId: number | null; readonly dryRun: boolean },
): CompactAppendSummary {
  return {
    filesBefore: done.reduce((s, w) => s + w.files.length, 0),
    filesAfter: done.reduce((s, w) => s + w.outputs.length, 0),
    bytesRead: done.reduce((s, w) => s + w.bytes, 0),
    bytesWritten: done.reduce((s, w) => s + w.outputs.reduce((t, f) => t + f.fileSize, 0), 0),
    rows: done.reduce((s, w) => s + w.rows, 0),
    partitions: new Set(done.map((w) => w.split.partitionPath)).size,
    windows: done.length,
    remainingWindows: run.remainingWindows,
    durationMs: Date.now() - run.started,
    baseSnapshotId: run.baseSnapshotId,
    dryRun: run.dryRun,
    ...parts,
  };
}

function windowPlan(w: Window): CompactWindowPlan {
  return {
    partition: w.split.partitionSpec,
    bucket: w.split.bucket,
    files: w.files.map((f) => f.meta.fileName),
    bytes: w.bytes,
    rows: w.rows,
  };
}

/** Rewrites every window (its writer stays open on the window until the commit is decided); on failure deletes what was written. */
async function rewriteWindows(run: AppendCompactionRun, windows: readonly Window[], progress: CompactionProgress): Promise<void> {
  const { table, schema, options } = run;
  try {
    for (const w of windows) {
      await rewriteWindow(table, schema, w, {
        signal: options.signal,
        copyMinRows: run.copyMinRows,
        passRows: options.passDecodedRows ?? true,
        onFile: (file) => progress.fileRead(file.meta.fileSize),
      });
      progress.bytesWritten += w.outputs.reduce((t, f) => t + f.fileSize, 0);
    }
    checkAborted(options.signal);
  } catch (e) {
    await deleteOutputs(table, windows);
    throw e;
  }
}

/**
 * Commits the windows. Windows whose files had deletion vectors go with the rewritten DV files in
 * one attempt (a conflict gives the whole run up: vectors changed meanwhile may delete rows the
 * rewrite carried over); otherwise windows whose inputs another commit removed are dropped and the
 * rest committed again.
 */
async function commitWindows(
  run: AppendCompactionRun,
  baseSnapshotId: number | null,
  windows: readonly Window[],
): Promise<CompactionCommitOutcome<Window>> {
  const { table, options } = run;
  const commitUser = options.commitUser ?? randomUUID();
  const dv = await dropVectorsOf(table, baseSnapshotId, windows);
  if (dv === null) return commitDroppingLost(table, commitUser, windows, windowUnits(table));
  try {
    return await commitAllOrNothing(table, commitUser, windows, windowUnits(table, dv.index), dv.files);
  } finally {
    await dv.files.release();
  }
}

/** The deletion-vector changes of a compaction: vectors of rewritten files dropped, per bucket. */
interface DvChanges {
  readonly index: Map<string, DvIndexIncrement>;
  /** The index files written. */
  readonly files: RunIndexFiles;
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
  const files = runIndexFiles(table);
  const o = table.context.options;
  const unaware = o.bucket === -1;
  const entries = await deletionVectorEntries(table, snapshotId);
  const index = new Map<string, DvIndexIncrement>();
  for (const [key, g] of gone) {
    const slot = entries.filter((e) => e.bucket === g.split.bucket && partitionKey(e.partition) === partitionKey(g.split.partition));
    const base = unaware ? slot.filter((e) => (e.dvRanges ?? []).some((r) => g.files.has(r.dataFileName))) : slot;
    const m = await BucketDvMaintainer.restore(table.fileIO, table.paths, base, o.deletionVectorsBitmap64);
    for (const f of g.files) m.removeDeletionVectorOf(f);
    index.set(key, await m.prepareCommit(files.write, false, unaware ? o.deletionVectorIndexFileTargetSize : undefined));
  }
  return { index, files };
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

/** How the shared COMPACT commit sees a window: the files it read, and the files it wrote. */
function windowUnits(table: Table, index?: ReadonlyMap<string, DvIndexIncrement>): CompactionUnits<Window> {
  return {
    messagesOf: (windows) => messagesOf(windows, index),
    inputsOf: (w) => ({ split: w.split, files: w.files.map((f) => f.meta) }),
    outputsOf: (w) => ({ split: w.split, files: w.outputs }),
    deleteOutputs: (windows) => deleteOutputs(table, windows),
  };
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
