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
  CommitConflictError,
  Levels,
  LookupLevels,
  clearInflightFiles,
  recordInflightPrefixes,
  snapshotIndexEntries,
  trimmedKeyFields,
  type DeletionVectorCompaction,
  type DvIndexIncrement,
  binaryRowKeyComparator,
  compactStrategy,
  compactionSettings,
  coreOptions,
  openBucketRewriter,
  parsePredicate,
  partitionKey,
  pickFullCompaction,
  isUsefulUnit,
  predicateColumns,
  runCompactTask,
  MaintenanceArgumentError,
  checkAborted,
  type BucketRewriter,
  type CommitMessage,
  type CompactUnit,
  type DataSplit,
  type Table,
} from '@tidemark/core';
import {
  BATCH_COMMIT_IDENTIFIER,
  INDEX_FILE_PREFIX,
  INDEX_TYPE_DELETION_VECTORS,
  type DataFileMeta,
  type DataType,
  type IndexManifestEntry,
} from '@tidemark/format';
import type { CompactAppendSummary, CompactProgress, CompactWindowPlan } from './compact-append.js';
import { anyOutputLive, splitByLiveInputs } from './compaction-liveness.js';

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
  const dryRun = options.dryRun ?? false;
  const full = options.full ?? false;
  checkAborted(options.signal);
  const schema = await table.schemaManager.latest();
  if (schema.primaryKeys.length === 0) {
    throw new MaintenanceArgumentError(`${table.location} is an append table; compactPrimaryKeyTable compacts primary-key tables only`);
  }
  const tableOptions = coreOptions(schema);
  const withVectors = tableOptions.deletionVectorsEnabled;
  if (tableOptions.bucket === -2) {
    throw new MaintenanceArgumentError(`${table.location}: compaction of postponed buckets (bucket = -2) is not supported`);
  }
  if (options.where !== undefined) {
    const columns = [...predicateColumns(parsePredicate(options.where, schema.fields))];
    const other = columns.filter((c) => !schema.partitionKeys.includes(c));
    if (other.length > 0) {
      throw new MaintenanceArgumentError(
        `compaction 'where' may name partition columns only (${schema.partitionKeys.join(', ') || 'the table has none'}); ` +
          `it names ${other.join(', ')}`,
      );
    }
  }
  const settings = compactionSettings(schema);
  const strategy = compactStrategy(settings);
  const keyTypes: DataType[] = schema.primaryKeys
    .filter((k) => !schema.partitionKeys.includes(k))
    .map((k) => schema.fields.find((f) => f.name === k)!.type);
  const compare = binaryRowKeyComparator(keyTypes);
  const producer = tableOptions.changelogProducer;
  const producesChangelog = producer === 'lookup' || producer === 'full-compaction';

  // ---- plan ----
  const plan = await table
    .newRead({
      ...(options.partition !== undefined ? { partition: options.partition } : {}),
      ...(options.where !== undefined ? { where: options.where } : {}),
    })
    .plan();
  const jobs: BucketJob[] = [];
  for (const split of plan.splits) {
    const where = `${table.location}: bucket ${split.bucket} of partition '${split.partitionPath}'`;
    const levels = new Levels(
      split.files.map((f) => f.meta),
      settings.numLevels,
      compare,
      where,
    );
    const runs = levels.levelSortedRuns();
    // A full compaction purges the rows deleted by vector: files with one are rewritten, as in Java.
    const hasVector = (f: DataFileMeta): boolean => split.deletionFiles.has(f.fileName);
    const unit = full ? pickFullCompaction(levels.numberOfLevels, runs, hasVector) : strategy.pick(levels.numberOfLevels, runs);
    if (!isUsefulUnit(unit)) continue;
    // Reads of deletion-vector tables do not merge: no retraction may stay in levels >= 1.
    const dropDelete = unit.outputLevel !== 0 && (withVectors || unit.outputLevel >= levels.nonEmptyHighestLevel);
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
  const filesTotal = jobs.reduce((s, j) => s + j.unit.files.length, 0);
  const bytesTotal = jobs.reduce((s, j) => s + j.bytes, 0);

  const summary = (
    parts: Partial<CompactPrimaryKeySummary> & Pick<CompactPrimaryKeySummary, 'snapshotId'>,
    done: readonly BucketJob[],
  ): CompactPrimaryKeySummary => {
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
      durationMs: Date.now() - started,
      baseSnapshotId: plan.snapshotId,
      dryRun,
      ...parts,
    };
  };

  if (dryRun) {
    return {
      ...summary({ snapshotId: null }, []),
      filesBefore: filesTotal,
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
  if (jobs.length === 0) return summary({ snapshotId: null }, []);

  // ---- rewrite ----
  const progress = { filesDone: 0, bytesRead: 0, bytesWritten: 0 };
  const report = (phase: CompactProgress['phase']): void => options.onProgress?.({ phase, ...progress, filesTotal, bytesTotal });
  report('rewriting');
  try {
    return await rewriteAndCommit();
  } finally {
    for (const j of jobs) await j.rewriter?.close().catch(() => undefined);
  }

  async function rewriteAndCommit(): Promise<CompactPrimaryKeySummary> {
    const dvFiles = withVectors ? await deletionVectorFiles(table, plan.snapshotId) : null;
    try {
      return await rewriteAndCommitWith(dvFiles);
    } finally {
      await dvFiles?.release();
    }
  }

  async function rewriteAndCommitWith(dvFiles: DvFiles | null): Promise<CompactPrimaryKeySummary> {
    try {
      for (const j of jobs) {
        checkAborted(options.signal);
        let dv: DeletionVectorCompaction | undefined;
        if (dvFiles !== null) {
          const slot = dvFiles.entries.filter(
            (e) => e.bucket === j.split.bucket && partitionKey(e.partition) === partitionKey(j.split.partition),
          );
          const maintainer = await BucketDvMaintainer.restore(table.fileIO, table.paths, slot, tableOptions.deletionVectorsBitmap64);
          const lookup = new LookupLevels(j.levels, {
            fileIO: table.fileIO,
            pathOf: (name) => table.paths.dataFilePath(j.split.partitionPath, j.split.bucket, name),
            schemaOf: (id) => (id === schema.id ? Promise.resolve(schema) : table.schemaManager.schema(id)),
            readFields: schema.fields,
            keyFields: trimmedKeyFields(schema),
            isDeleted: (name, pos) => maintainer.isDeleted(name, pos),
          });
          dv = { maintainer, lookup };
        }
        j.rewriter = await openBucketRewriter(table, schema, j.split, {
          ...(dv !== undefined ? { deletionVectors: dv } : {}),
          ...(producesChangelog ? { levels: j.levels } : {}),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
          onFileRead: (file) => {
            progress.filesDone++;
            progress.bytesRead += file.fileSize;
            report('rewriting');
          },
        });
        const result = await runCompactTask(j.unit, j.rewriter, {
          minFileSize: settings.compactionFileSize,
          maxLevel: j.maxLevel,
          dropDelete: j.dropDelete,
          compare,
          ...(full ? { rewriteInPlace: (f: DataFileMeta) => j.split.deletionFiles.has(f.fileName) } : {}),
        });
        j.before = result.before;
        j.after = result.after;
        j.changelog = result.changelog ?? [];
        // Every compaction of a DV bucket replaces its DV file, so concurrent ones meet at commit.
        if (dv !== undefined && dvFiles !== null) j.index = await dv.maintainer.prepareCommit(dvFiles.write, true);
        progress.bytesWritten += newFiles(j).reduce((t, f) => t + f.fileSize, 0);
      }
      checkAborted(options.signal);
    } catch (e) {
      await deleteOutputs(jobs);
      await dvFiles?.discard();
      // An abort stops the merge-read with a core error: report it as the maintenance abort.
      checkAborted(options.signal);
      throw e;
    }

    // ---- commit ----
    report('committing');
    const commit = table.newCommit({ commitUser: options.commitUser ?? randomUUID() });
    let pending = jobs.filter((j) => j.before.length > 0);
    let dropped = 0;
    let droppedOutputs = 0;
    let lastConflict = '';
    const gaveUp = (): Partial<CompactPrimaryKeySummary> =>
      dropped > 0 ? { gaveUp: { reason: lastConflict, windows: dropped, outputFilesDeleted: droppedOutputs } } : {};
    if (pending.length === 0) return summary({ snapshotId: null }, []);
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages: messagesOf(pending) });
        return summary({ snapshotId: result.status === 'committed' ? result.snapshotId : null, ...gaveUp() }, pending);
      } catch (e) {
        if (!(e instanceof CommitConflictError) || attempt >= 3 || dvFiles !== null) {
          // Our files are unreferenced unless a snapshot create had an unknown outcome and landed.
          if (!(await anyOutputLive(table, pending, (j) => ({ split: j.split, files: newFiles(j) })))) {
            await deleteOutputs(pending);
            await dvFiles?.discard();
            // Vectors planned against another state cannot be kept per bucket: give the run up.
            if (dvFiles !== null && e instanceof CommitConflictError) {
              const outputs = pending.reduce((s, j) => s + newFiles(j).length, 0);
              return summary({ snapshotId: null, gaveUp: { reason: e.message, windows: pending.length, outputFilesDeleted: outputs } }, []);
            }
          }
          throw e;
        }
        lastConflict = e.message;
        const { keep, lost } = await splitByLiveInputs(table, pending, (j) => ({ split: j.split, files: j.before }));
        // A conflict that is not about our inputs (should not happen): give up on everything.
        const drop = lost.length === 0 ? keep : lost;
        dropped += drop.length;
        droppedOutputs += drop.reduce((s, j) => s + newFiles(j).length, 0);
        await deleteOutputs(drop);
        pending = lost.length === 0 ? [] : keep;
        if (pending.length === 0) return summary({ snapshotId: null, ...gaveUp() }, []);
      }
    }
  }
}

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

/** DV index files a compaction run writes (`index-<uuid>-<n>`, recorded in flight), and the base snapshot's DV entries. */
interface DvFiles {
  readonly entries: readonly IndexManifestEntry[];
  write(bytes: Uint8Array): Promise<string>;
  /** Deletes the files written (when nothing committed them). */
  discard(): Promise<void>;
  release(): Promise<void>;
}

async function deletionVectorFiles(table: Table, snapshotId: number | null): Promise<DvFiles> {
  const entries =
    snapshotId === null
      ? []
      : (await snapshotIndexEntries(table.fileIO, table.paths, await table.snapshotManager.snapshot(snapshotId))).filter(
          (e) => e.indexType === INDEX_TYPE_DELETION_VECTORS,
        );
  const uuid = randomUUID();
  const prefix = `${INDEX_FILE_PREFIX}${uuid}-`;
  const recordId = `compact-dv-${uuid}`;
  const written: string[] = [];
  let recorded = false;
  return {
    entries,
    async write(bytes) {
      if (!recorded) {
        await recordInflightPrefixes(table.fileIO, table.location, recordId, [prefix]);
        recorded = true;
      }
      const name = `${prefix}${written.length}`;
      written.push(name);
      await table.fileIO.write(table.paths.indexPath(name), bytes);
      return name;
    },
    async discard() {
      await table.fileIO.deleteMany(written.map((n) => table.paths.indexPath(n))).catch(() => undefined);
    },
    async release() {
      if (recorded) await clearInflightFiles(table.fileIO, table.location, recordId).catch(() => undefined);
    },
  };
}

/** Deletes every file the rewriters of `jobs` wrote (never an input that only changed level). */
async function deleteOutputs(jobs: readonly BucketJob[]): Promise<void> {
  for (const j of jobs) {
    j.after = [];
    j.before = [];
    await j.rewriter?.deleteWritten().catch(() => undefined);
  }
}
