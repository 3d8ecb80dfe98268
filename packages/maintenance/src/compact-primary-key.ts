/**
 * Compaction of primary-key tables on demand: per (partition, bucket) of the latest snapshot, the
 * bucket's files are arranged in LSM levels; a full compaction merges every file into the top
 * level (dropping retractions, since nothing older can exist below), otherwise Paimon's universal
 * compaction picks what to merge. Files that need no merge only change level. Everything is
 * committed as one COMPACT snapshot (DELETE inputs, ADD outputs).
 *
 * Concurrency: writes landing meanwhile are fine (their level-0 files are not inputs). When
 * another commit removed some inputs first (another compaction of the same bucket, an
 * overwrite), the commit's conflict check refuses it; the affected buckets are dropped, their new
 * files deleted (no snapshot references them), and the rest is committed; when nothing is left the
 * run gives up cleanly and the table is as the other commit left it.
 */
import { randomUUID } from 'node:crypto';
import {
  BucketDvMaintainer,
  Levels,
  LookupLevels,
  MaintenanceArgumentError,
  binaryRowKeyComparator,
  checkAborted,
  compactStrategy,
  compactionSettings,
  coreOptions,
  isUsefulUnit,
  openBucketRewriter,
  partitionKey,
  pickFullCompaction,
  runCompactTask,
  trimmedKeyFields,
  type BucketRewriter,
  type CommitMessage,
  type CompactStrategy,
  type CompactUnit,
  type CompactionSettings,
  type DataSplit,
  type DeletionVectorCompaction,
  type DvIndexIncrement,
  type KeyComparator,
  type Table,
} from '@tidemark/core';
import type { DataFileMeta, DataType, IndexManifestEntry, TableSchema } from '@tidemark/format';
import type { CompactAppendSummary, CompactWindowPlan } from './compact-append.js';
import {
  CompactionProgress,
  checkPartitionWhere,
  commitAllOrNothing,
  commitDroppingLost,
  deletionVectorEntries,
  planCompaction,
  runIndexFiles,
  type CompactProgress,
  type CompactionUnits,
  type RunIndexFiles,
} from './compaction-run.js';

/** Options of {@link compactPrimaryKeyTable}. */
export interface CompactPrimaryKeyOptions {
  /** Merge every file of each bucket into the top level (default: what universal compaction picks). */
  readonly full?: boolean;
  /** Only this partition (`{ dt: '2024-05-01' }`, values as in partition directory names). */
  readonly partition?: Readonly<Record<string, string>>;
  /** Only partitions matching this predicate; it may name partition columns only. */
  readonly where?: string;
  /** Plan only: report the buckets and files, write and commit nothing. */
  readonly dryRun?: boolean;
  readonly onProgress?: (progress: CompactProgress) => void;
  /** Aborting stops between batches; files written so far are deleted and nothing is committed. */
  readonly signal?: AbortSignal;
  /** Commit user of the COMPACT snapshot (default a fresh UUID). */
  readonly commitUser?: string;
}

/** One planned bucket compaction (a window is one bucket here). */
export interface CompactBucketPlan extends CompactWindowPlan {
  /** Level the output goes to. */
  readonly outputLevel: number;
}

/** Result of {@link compactPrimaryKeyTable}; `windows` counts compacted buckets. */
export interface CompactPrimaryKeySummary extends CompactAppendSummary {
  /** Input files that only moved to another level (counted in `filesBefore` and `filesAfter`). */
  readonly filesUpgraded: number;
  readonly plan?: readonly CompactBucketPlan[];
}

interface BucketJob {
  readonly split: DataSplit;
  readonly unit: CompactUnit;
  readonly dropDelete: boolean;
  readonly maxLevel: number;
  readonly bytes: number;
  readonly rows: number;
  before: DataFileMeta[];
  after: DataFileMeta[];
  /** Changelog files (`changelog-producer` = `lookup` / `full-compaction`). */
  changelog: DataFileMeta[];
  /** The bucket's levels (lookups of the lookup producer read them). */
  readonly levels: Levels;
  /** Kept open until the commit is decided: its in-flight record guards the new files. */
  rewriter?: BucketRewriter;
  /** Deletion-vector tables: the bucket's rewritten DV index file and the one it replaces. */
  index: DvIndexIncrement | null;
}

/** What every step of one run reads: the table, its latest schema and the settings derived from it. */
interface PkCompactionRun {
  readonly table: Table;
  readonly options: CompactPrimaryKeyOptions;
  readonly schema: TableSchema;
  readonly full: boolean;
  readonly withVectors: boolean;
  readonly bitmap64: boolean;
  readonly producesChangelog: boolean;
  readonly settings: CompactionSettings;
  readonly strategy: CompactStrategy;
  readonly compare: KeyComparator;
}

/**
 * Compacts a primary-key table. See the module comment for the concurrency rules.
 *
 * Deletion-vector tables are compacted with lookups: rows the compacted keys replace in higher
 * levels are marked in the bucket's vectors, which the COMPACT snapshot rewrites; a conflict with
 * another commit gives the run up (nothing committed).
 *
 * @throws MaintenanceArgumentError for an append table, postponed buckets, or a `where` naming
 *   non-partition columns.
 * @throws MaintenanceAbortedError when `signal` aborts (nothing is committed, new files are deleted).
 */
export async function compactPrimaryKeyTable(table: Table, options: CompactPrimaryKeyOptions = {}): Promise<CompactPrimaryKeySummary> {
  const started = Date.now();
  checkAborted(options.signal);
  const run = await openRun(table, options);
  const plan = await planCompaction(table, options);
  const jobs = planBucketJobs(run, plan.splits);
  const summary = (parts: SummaryParts, done: readonly BucketJob[]): CompactPrimaryKeySummary =>
    summarize(parts, done, { started, baseSnapshotId: plan.snapshotId, dryRun: options.dryRun ?? false });
  if (options.dryRun ?? false) return dryRunSummary(summary({ snapshotId: null }, []), jobs);
  if (jobs.length === 0) return summary({ snapshotId: null }, []);

  const progress = new CompactionProgress(
    options.onProgress,
    jobs.reduce((s, j) => s + j.unit.files.length, 0),
    jobs.reduce((s, j) => s + j.bytes, 0),
  );
  progress.report('rewriting');
  const dvFiles = run.withVectors ? await deletionVectorFiles(table, plan.snapshotId) : null;
  try {
    await rewriteBuckets(run, jobs, dvFiles, progress);
    progress.report('committing');
    const pending = jobs.filter((j) => j.before.length > 0);
    if (pending.length === 0) return summary({ snapshotId: null }, []);
    const commitUser = options.commitUser ?? randomUUID();
    const { snapshotId, committed, gaveUp } =
      dvFiles === null
        ? await commitDroppingLost(table, commitUser, pending, BUCKET_JOBS)
        : await commitAllOrNothing(table, commitUser, pending, BUCKET_JOBS, dvFiles.index);
    return summary({ snapshotId, ...(gaveUp !== undefined ? { gaveUp } : {}) }, committed);
  } finally {
    await dvFiles?.index.release();
    for (const j of jobs) await j.rewriter?.close().catch(() => undefined);
  }
}

/** Reads the latest schema and the settings of the run; refuses tables and options it cannot compact. */
async function openRun(table: Table, options: CompactPrimaryKeyOptions): Promise<PkCompactionRun> {
  const schema = await table.schemaManager.latest();
  if (schema.primaryKeys.length === 0) {
    throw new MaintenanceArgumentError(`${table.location} is an append table; compactPrimaryKeyTable compacts primary-key tables only`);
  }
  const tableOptions = coreOptions(schema);
  if (tableOptions.bucket === -2) {
    throw new MaintenanceArgumentError(`${table.location}: compaction of postponed buckets (bucket = -2) is not supported`);
  }
  checkPartitionWhere(schema, options.where);
  const settings = compactionSettings(schema);
  const keyTypes: DataType[] = schema.primaryKeys
    .filter((k) => !schema.partitionKeys.includes(k))
    .map((k) => schema.fields.find((f) => f.name === k)!.type);
  const producer = tableOptions.changelogProducer;
  return {
    table,
    options,
    schema,
    full: options.full ?? false,
    withVectors: tableOptions.deletionVectorsEnabled,
    bitmap64: tableOptions.deletionVectorsBitmap64,
    producesChangelog: producer === 'lookup' || producer === 'full-compaction',
    settings,
    strategy: compactStrategy(settings),
    compare: binaryRowKeyComparator(keyTypes),
  };
}

/** Arranges each split's files in levels and keeps the buckets where a full or universal compaction picks something useful. */
function planBucketJobs(run: PkCompactionRun, splits: readonly DataSplit[]): BucketJob[] {
  const jobs: BucketJob[] = [];
  for (const split of splits) {
    const where = `${run.table.location}: bucket ${split.bucket} of partition '${split.partitionPath}'`;
    const levels = new Levels(
      split.files.map((f) => f.meta),
      run.settings.numLevels,
      run.compare,
      where,
    );
    const runs = levels.levelSortedRuns();
    // A full compaction purges the rows deleted by vector: files with one are rewritten, as in Java.
    const hasVector = (f: DataFileMeta): boolean => split.deletionFiles.has(f.fileName);
    const unit = run.full ? pickFullCompaction(levels.numberOfLevels, runs, hasVector) : run.strategy.pick(levels.numberOfLevels, runs);
    if (!isUsefulUnit(unit)) continue;
    // Reads of deletion-vector tables do not merge: no retraction may stay in levels >= 1.
    const dropDelete = unit.outputLevel !== 0 && (run.withVectors || unit.outputLevel >= levels.nonEmptyHighestLevel);
    jobs.push({
      split,
      unit,
      dropDelete,
      maxLevel: levels.maxLevel,
      bytes: unit.files.reduce((s, f) => s + f.fileSize, 0),
      rows: unit.files.reduce((s, f) => s + f.rowCount, 0),
      before: [],
      after: [],
      changelog: [],
      levels,
      index: null,
    });
  }
  return jobs;
}

type SummaryParts = Partial<CompactPrimaryKeySummary> & Pick<CompactPrimaryKeySummary, 'snapshotId'>;

/** The summary of the buckets `done` (committed ones), with `parts` on top. */
function summarize(
  parts: SummaryParts,
  done: readonly BucketJob[],
  run: { readonly started: number; readonly baseSnapshotId: number | null; readonly dryRun: boolean },
): CompactPrimaryKeySummary {
  const upgraded = done.reduce((s, j) => s + j.after.filter((a) => j.before.some((b) => b.fileName === a.fileName)).length, 0);
  return {
    filesBefore: done.reduce((s, j) => s + j.before.length, 0),
    filesAfter: done.reduce((s, j) => s + j.after.length, 0),
    filesUpgraded: upgraded,
    bytesRead: done.reduce((s, j) => s + rewrittenBytes(j), 0),
    bytesWritten: done.reduce((s, j) => s + newFiles(j).reduce((t, f) => t + f.fileSize, 0), 0),
    rows: done.reduce((s, j) => s + j.before.reduce((t, f) => t + f.rowCount, 0), 0),
    partitions: new Set(done.map((j) => j.split.partitionPath)).size,
    windows: done.length,
    remainingWindows: 0,
    durationMs: Date.now() - run.started,
    baseSnapshotId: run.baseSnapshotId,
    dryRun: run.dryRun,
    ...parts,
  };
}

/** A dry run's summary: the planned buckets instead of compacted ones. */
function dryRunSummary(empty: CompactPrimaryKeySummary, jobs: readonly BucketJob[]): CompactPrimaryKeySummary {
  return {
    ...empty,
    filesBefore: jobs.reduce((s, j) => s + j.unit.files.length, 0),
    partitions: new Set(jobs.map((j) => j.split.partitionPath)).size,
    windows: jobs.length,
    plan: jobs.map((j) => ({
      partition: j.split.partitionSpec,
      bucket: j.split.bucket,
      files: j.unit.files.map((f) => f.fileName),
      bytes: j.bytes,
      rows: j.rows,
      outputLevel: j.unit.outputLevel,
    })),
  };
}

/**
 * Rewrites every planned bucket (its rewriter stays open on the job until the commit is decided).
 * On any failure, abort included, deletes what was written and throws.
 */
async function rewriteBuckets(
  run: PkCompactionRun,
  jobs: readonly BucketJob[],
  dvFiles: DvFiles | null,
  progress: CompactionProgress,
): Promise<void> {
  try {
    for (const j of jobs) {
      checkAborted(run.options.signal);
      await rewriteBucket(run, j, dvFiles, progress);
      progress.bytesWritten += newFiles(j).reduce((t, f) => t + f.fileSize, 0);
    }
    checkAborted(run.options.signal);
  } catch (e) {
    await deleteOutputs(jobs);
    await dvFiles?.index.discard();
    // An abort stops the merge-read with a core error: report it as the maintenance abort.
    checkAborted(run.options.signal);
    throw e;
  }
}

/** Merges one bucket's picked files into its output level (and, with vectors, rewrites the bucket's DV index file). */
async function rewriteBucket(run: PkCompactionRun, j: BucketJob, dvFiles: DvFiles | null, progress: CompactionProgress): Promise<void> {
  const dv = dvFiles === null ? undefined : await deletionVectorCompaction(run, j, dvFiles);
  j.rewriter = await openBucketRewriter(run.table, run.schema, j.split, {
    ...(dv !== undefined ? { deletionVectors: dv } : {}),
    ...(run.producesChangelog ? { levels: j.levels } : {}),
    ...(run.options.signal !== undefined ? { signal: run.options.signal } : {}),
    onFileRead: (file) => progress.fileRead(file.fileSize),
  });
  const result = await runCompactTask(j.unit, j.rewriter, {
    minFileSize: run.settings.compactionFileSize,
    maxLevel: j.maxLevel,
    dropDelete: j.dropDelete,
    compare: run.compare,
    ...(run.full ? { rewriteInPlace: (f: DataFileMeta) => j.split.deletionFiles.has(f.fileName) } : {}),
  });
  j.before = result.before;
  j.after = result.after;
  j.changelog = result.changelog ?? [];
  // Every compaction of a DV bucket replaces its DV file, so concurrent ones meet at commit.
  if (dv !== undefined && dvFiles !== null) j.index = await dv.maintainer.prepareCommit(dvFiles.index.write, true);
}

/** The bucket's vectors as of the plan, and lookups into its levels that mark the rows the compacted keys replace. */
async function deletionVectorCompaction(run: PkCompactionRun, j: BucketJob, dvFiles: DvFiles): Promise<DeletionVectorCompaction> {
  const { table, schema } = run;
  const slot = dvFiles.entries.filter((e) => e.bucket === j.split.bucket && partitionKey(e.partition) === partitionKey(j.split.partition));
  const maintainer = await BucketDvMaintainer.restore(table.fileIO, table.paths, slot, run.bitmap64);
  const lookup = new LookupLevels(j.levels, {
    fileIO: table.fileIO,
    pathOf: (name) => table.paths.dataFilePath(j.split.partitionPath, j.split.bucket, name),
    schemaOf: (id) => (id === schema.id ? Promise.resolve(schema) : table.schemaManager.schema(id)),
    readFields: schema.fields,
    keyFields: trimmedKeyFields(schema),
    isDeleted: (name, pos) => maintainer.isDeleted(name, pos),
  });
  return { maintainer, lookup };
}

/** How the shared COMPACT commit sees a bucket job. */
const BUCKET_JOBS: CompactionUnits<BucketJob> = {
  messagesOf,
  inputsOf: (j) => ({ split: j.split, files: j.before }),
  outputsOf: (j) => ({ split: j.split, files: newFiles(j) }),
  deleteOutputs,
};

/** Output files written anew (not inputs that only changed level). */
function newFiles(j: BucketJob): DataFileMeta[] {
  const inputs = new Set(j.unit.files.map((f) => f.fileName));
  return j.after.filter((f) => !inputs.has(f.fileName));
}

/** Bytes of the inputs that were read and rewritten (upgraded files are not read). */
function rewrittenBytes(j: BucketJob): number {
  const moved = new Set(j.after.map((f) => f.fileName));
  return j.before.filter((f) => !moved.has(f.fileName)).reduce((s, f) => s + f.fileSize, 0);
}

function messagesOf(jobs: readonly BucketJob[]): CommitMessage[] {
  return jobs.map((j) => ({
    partition: j.split.partition,
    bucket: j.split.bucket,
    totalBuckets: j.split.totalBuckets,
    newFiles: [],
    compactBefore: j.before,
    compactAfter: j.after,
    ...(j.changelog.length > 0 ? { compactChangelogFiles: j.changelog } : {}),
    ...(j.index !== null ? { compactNewIndexFiles: j.index.newIndexFiles, compactDeletedIndexFiles: j.index.deletedIndexFiles } : {}),
  }));
}

/** The base snapshot's DV entries, and the DV index files the run writes. */
interface DvFiles {
  readonly entries: readonly IndexManifestEntry[];
  readonly index: RunIndexFiles;
}

async function deletionVectorFiles(table: Table, snapshotId: number | null): Promise<DvFiles> {
  return { entries: await deletionVectorEntries(table, snapshotId), index: runIndexFiles(table) };
}

/** Deletes every file the rewriters of `jobs` wrote (never an input that only changed level). */
async function deleteOutputs(jobs: readonly BucketJob[]): Promise<void> {
  for (const j of jobs) {
    j.after = [];
    j.before = [];
    await j.rewriter?.deleteWritten().catch(() => undefined);
  }
}
