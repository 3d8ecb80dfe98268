/**
 * Compaction run by the writer of one primary-key bucket, as Java's merge-tree writer runs it:
 * after each flush the new level-0 files join the bucket's levels and universal compaction may
 * start one compaction in the background; when the bucket has more sorted runs than
 * `num-sorted-run.stop-trigger` the writer first waits for the running one. At commit the writer
 * waits for the running compaction (batch writes do, in Java too), runs a full compaction every
 * `full-compaction.delta-commits` commits, and hands out what was compacted since the last commit
 * (compactBefore / compactAfter, committed as a COMPACT snapshot after the APPEND one).
 *
 * A compaction may take files this writer flushed in the same commit, and may compact its own
 * earlier output again: such an intermediate file was never committed, so it is deleted at once
 * and neither committed as added nor as removed (a file that only changed level is kept).
 */
import type { FileIO } from '@tidemark/storage';
import type { DataFileMeta, IndexFileMeta, TableSchema } from '@tidemark/format';
import type { CompactManager } from '../write/key-value/merge-tree-writer.js';
import { trimmedKeyFields } from '../write/key-value/key-value.js';
import type { BucketCompactionReport, CompactManagerContext } from '../write/table-write.js';
import { coreOptions } from '../core-options.js';
import { createBucketRewriter } from './bucket-rewriter.js';
import type { DeletionVectorCompaction } from './lookup-rewriter.js';
import type { CompactResult } from './compact-task.js';
import { MergeTreeCompactManager, type CompactionReport } from './compact-manager.js';
import { compactStrategy, compactionSettings } from './compaction-settings.js';
import { Levels } from './levels.js';
import { binaryRowKeyComparator } from './sorted-run.js';
import { LookupLevels } from './lookup-levels.js';
import type { BucketDvMaintainer, DvIndexIncrement, WriteIndexFile } from '../deletion-vectors/bucket-dv-maintainer.js';
import { withExtraFiles } from '../file-index/data-file-index-writer.js';

/** What a writer commits for its compactions. */
export interface WriterCompactionIncrement {
  readonly compactBefore: readonly DataFileMeta[];
  readonly compactAfter: readonly DataFileMeta[];
  readonly newIndexFiles?: readonly IndexFileMeta[];
  readonly deletedIndexFiles?: readonly IndexFileMeta[];
  /** Changelog files of the compactions (`lookup` / `full-compaction` producers), when there are any. */
  readonly compactChangelog?: readonly DataFileMeta[];
}

/** Settings of {@link WriterCompaction}. */
export interface WriterCompactionOptions {
  /** Builds the bucket's compact manager from its live files (called once, at the first flush). */
  readonly open: () => Promise<MergeTreeCompactManager>;
  /** `full-compaction.delta-commits`, or null. */
  readonly fullCompactionDeltaCommits: number | null;
  /** Deletes data files of the bucket (intermediate compaction outputs). */
  readonly deleteFiles: (files: readonly DataFileMeta[]) => Promise<void>;
  /**
   * `changelog-producer` = `lookup`: every commit compacts all level-0 files up first, so that the
   * changelog of its data is committed with it (Paimon's `lookup-wait`).
   */
  readonly compactLevel0AtCommit?: boolean;
  /**
   * Deletion-vector tables: every commit compacts all level-0 files up (batch reads skip level 0,
   * so the commit's data would be invisible otherwise), and when anything was compacted this
   * writes the bucket's deletion vectors and returns the index change.
   */
  readonly deletionVectors?: { commitIndex(): Promise<DvIndexIncrement> };
}

/** The compaction side of one bucket writer (the merge-tree writer's compaction hook). */
export class WriterCompaction {
  private manager: MergeTreeCompactManager | null = null;
  private opening: Promise<MergeTreeCompactManager> | null = null;
  private readonly compactBefore = new Map<string, DataFileMeta>();
  private compactAfter: DataFileMeta[] = [];
  private compactChangelog: DataFileMeta[] = [];
  private commits = 0;

  constructor(private readonly options: WriterCompactionOptions) {}

  private async get(): Promise<MergeTreeCompactManager> {
    if (this.manager !== null) return this.manager;
    this.opening ??= this.options.open();
    this.manager = await this.opening;
    return this.manager;
  }

  /** After a flush: adds the new level-0 files, takes up a finished compaction, maybe starts one. */
  async onFlush(levelZeroFiles: readonly DataFileMeta[]): Promise<void> {
    const m = await this.get();
    const wait = m.shouldWaitForLatestCompaction();
    for (const f of levelZeroFiles) m.addNewFile(f);
    await this.sync(m, wait);
    m.triggerCompaction(false);
  }

  /** Opens the bucket's levels before any flush (see `CompactManager.restore`). */
  async restore(): Promise<void> {
    await this.get();
  }

  /** At commit: waits for the running compaction (and runs a due full one); returns what to commit. */
  async prepareCommit(): Promise<WriterCompactionIncrement> {
    this.commits++;
    const m = this.manager ?? (this.opening !== null ? await this.get() : null);
    if (m !== null) {
      await this.sync(m, true);
      const every = this.options.fullCompactionDeltaCommits;
      if (every !== null && this.commits % every === 0) {
        m.triggerCompaction(true);
        await this.sync(m, true);
      }
      // The strategy forces level 0 up; a flush during a running compaction left files behind.
      // Deletion-vector tables too: as Java's batch writers do for tables whose reads skip level 0.
      const drain = this.options.compactLevel0AtCommit === true || this.options.deletionVectors !== undefined;
      while (drain && m.levels.level0Files.length > 0) {
        if (m.triggerCompaction(false) === null) break;
        await this.sync(m, true);
      }
    }
    const changelog = this.compactChangelog;
    const out = {
      compactBefore: [...this.compactBefore.values()],
      compactAfter: this.compactAfter,
      ...(changelog.length > 0 ? { compactChangelog: changelog } : {}),
    };
    this.compactBefore.clear();
    this.compactAfter = [];
    this.compactChangelog = [];
    if (this.options.deletionVectors !== undefined && (out.compactBefore.length > 0 || out.compactAfter.length > 0)) {
      return { ...out, ...(await this.options.deletionVectors.commitIndex()) };
    }
    return out;
  }

  /** Stops the running compaction and deletes every compaction output not committed. */
  async abort(): Promise<void> {
    const m = this.manager ?? (this.opening !== null ? await this.get().catch(() => null) : null);
    const pending = m === null ? null : await m.close();
    if (pending !== null) await this.take(pending);
    const keep = new Set(this.compactBefore.keys());
    const orphans = [...this.compactAfter.filter((f) => !keep.has(f.fileName)), ...this.compactChangelog];
    this.compactBefore.clear();
    this.compactAfter = [];
    this.compactChangelog = [];
    if (orphans.length > 0) await this.options.deleteFiles(orphans);
  }

  private async sync(m: MergeTreeCompactManager, blocking: boolean): Promise<void> {
    const result = await m.getCompactionResult(blocking);
    if (result !== null) await this.take(result);
  }

  /** Folds a compaction result into what the next commit carries. */
  private async take(result: CompactResult): Promise<void> {
    const afterNames = new Set(result.after.map((f) => f.fileName));
    const intermediate: DataFileMeta[] = [];
    for (const f of result.before) {
      const i = this.compactAfter.findIndex((a) => a.fileName === f.fileName && a.level === f.level);
      if (i >= 0) {
        // Output of an earlier compaction of this commit, now compacted again: never committed.
        this.compactAfter.splice(i, 1);
        if (!this.compactBefore.has(f.fileName) && !afterNames.has(f.fileName)) intermediate.push(f);
      } else if (!this.compactBefore.has(f.fileName)) {
        this.compactBefore.set(f.fileName, f);
      }
    }
    this.compactAfter.push(...result.after);
    this.compactChangelog.push(...(result.changelog ?? []));
    if (intermediate.length > 0) await this.options.deleteFiles(intermediate);
  }
}

/** How a writer of a deletion-vector table keeps the vectors of one bucket. */
export interface WriterDeletionVectors {
  /** The bucket's vectors in the snapshot the writer's levels come from. */
  restore(): Promise<BucketDvMaintainer>;
  /** Writes a new DV index file of the writer; returns its name. */
  readonly writeIndexFile: WriteIndexFile;
}

/** What {@link writerCompactManager} needs of the table. */
export interface WriterCompactionTable {
  readonly fileIO: FileIO;
  readonly location: string;
  /** The schema the writer writes with. */
  readonly schema: TableSchema;
  schemaOf(id: number): Promise<TableSchema>;
}

/**
 * The compaction hook of one bucket writer of a primary-key table: universal compaction after
 * flushes (forcing level 0 up for first-row tables and `compaction.force-up-level-0`), outputs
 * named and recorded in flight like the writer's own files. `restore` lists the bucket's live
 * files when the writer started (asked once, at the first flush). `onCompaction` hears of each
 * compaction that finished (`TableWriteOptions.onCompaction`).
 */
export function writerCompactManager(
  table: WriterCompactionTable,
  bucket: CompactManagerContext,
  restore: () => Promise<readonly DataFileMeta[]>,
  deletionVectors?: WriterDeletionVectors,
  onCompaction?: (report: BucketCompactionReport) => void,
): CompactManager {
  const { schema } = table;
  const settings = compactionSettings(schema);
  const keyFields = trimmedKeyFields(schema);
  const compare = binaryRowKeyComparator(keyFields.map((f) => f.type));
  const producer = coreOptions(schema).changelogProducer;
  const producesCompactionChangelog = producer === 'lookup' || producer === 'full-compaction';
  const deleteFiles = async (files: readonly DataFileMeta[]): Promise<void> => {
    await table.fileIO.deleteMany(files.flatMap((f) => withExtraFiles(bucket.pathOf(f.fileName), f)));
  };
  let maintainer: BucketDvMaintainer | null = null;
  const compaction = new WriterCompaction({
    open: async () => {
      const abortController = new AbortController();
      const levels = new Levels(await restore(), settings.numLevels, compare, `${table.location}: bucket ${bucket.bucket}`);
      let dv: DeletionVectorCompaction | undefined;
      if (deletionVectors !== undefined) {
        const m = await deletionVectors.restore();
        maintainer = m;
        const lookup = new LookupLevels(levels, {
          fileIO: table.fileIO,
          pathOf: bucket.pathOf,
          schemaOf: (id) => table.schemaOf(id),
          readFields: schema.fields,
          keyFields,
          isDeleted: (name, pos) => m.isDeleted(name, pos),
        });
        dv = { maintainer: m, lookup };
      }
      const rewriter = createBucketRewriter({
        ...(dv !== undefined ? { deletionVectors: dv } : {}),
        ...(producesCompactionChangelog ? { changelog: { levels, newFileName: bucket.newChangelogFileName } } : {}),
        fileIO: table.fileIO,
        schema,
        schemaOf: (id) => table.schemaOf(id),
        pathOf: bucket.pathOf,
        newFileName: bucket.newFileName,
        beforeFile: bucket.beforeFile,
        signal: abortController.signal,
      });
      return new MergeTreeCompactManager(levels, compactStrategy(settings), rewriter, {
        minFileSize: settings.compactionFileSize,
        numSortedRunStopTrigger: settings.numSortedRunStopTrigger,
        compare,
        abortController,
        // Reads of DV tables do not merge, so no retraction may stay in levels >= 1.
        alwaysDropDelete: deletionVectors !== undefined,
        ...(onCompaction !== undefined
          ? { onCompacted: (r: CompactionReport) => onCompaction({ ...r, partition: bucket.partition, bucket: bucket.bucket }) }
          : {}),
      });
    },
    fullCompactionDeltaCommits: settings.fullCompactionDeltaCommits,
    deleteFiles,
    compactLevel0AtCommit: producer === 'lookup',
    ...(deletionVectors !== undefined
      ? {
          deletionVectors: {
            // Always a new file: two writers compacting one bucket then conflict at commit.
            commitIndex: () => maintainer!.prepareCommit(deletionVectors.writeIndexFile, true),
          },
        }
      : {}),
  });
  return {
    onFlush: (files) => compaction.onFlush(files),
    prepareCommit: () => compaction.prepareCommit(),
    abort: () => compaction.abort(),
    restore: () => compaction.restore(),
  };
}
