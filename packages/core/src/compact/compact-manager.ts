/**
 * Compaction of one primary-key bucket while a writer writes it, as Paimon's merge-tree compact
 * manager does: the writer reports each new level-0 file, then asks for a compaction; a picked
 * unit runs in the background (interleaved with the writer's I/O) and its result is taken up when
 * the writer syncs. Only one compaction runs per bucket at a time. When the bucket has more
 * sorted runs than `num-sorted-run.stop-trigger`, the writer waits for the running compaction
 * before it goes on.
 */
import type { DataFileMeta } from '@tidemark/format';
import { runCompactTask, type CompactResult, type CompactRewriter } from './compact-task.js';
import { CompactionError } from './compact-errors.js';
import type { Levels } from './levels.js';
import type { KeyComparator } from './sorted-run.js';
import { isUsefulUnit, pickFullCompaction, type CompactStrategy, type CompactUnit } from './universal-compaction.js';

/** Settings of {@link MergeTreeCompactManager}. */
export interface CompactManagerOptions {
  /** Files of at least this size are upgraded rather than rewritten. */
  readonly minFileSize: number;
  /** `num-sorted-run.stop-trigger`. */
  readonly numSortedRunStopTrigger: number;
  readonly compare: KeyComparator;
  /** Retractions are dropped by any compaction to a level ≥ 1 (deletion-vector tables). */
  readonly alwaysDropDelete?: boolean;
  /** Aborted by {@link MergeTreeCompactManager.close}; give its signal to the rewriter so it stops early. */
  readonly abortController?: AbortController;
  /** Told of each compaction that finished (not of a failed or aborted one); for metrics, must not throw. */
  readonly onCompacted?: (report: CompactionReport) => void;
}

/** A compaction that finished, as {@link CompactManagerOptions.onCompacted} hears of it. */
export interface CompactionReport {
  /** Milliseconds from its start to its result; it runs in the background while the writer writes. */
  readonly durationMs: number;
  /** A full compaction (every file into the max level), not a unit picked by universal compaction. */
  readonly full: boolean;
  readonly outputLevel: number;
  /** Files it replaced, and the files that replace them (an upgraded file counts on both sides). */
  readonly filesBefore: number;
  readonly filesAfter: number;
}

/** One bucket's levels plus the compaction running on them. */
export class MergeTreeCompactManager {
  private task: Promise<void> | null = null;
  private done: { result: CompactResult } | { error: unknown } | null = null;
  private readonly abort: AbortController;

  constructor(
    readonly levels: Levels,
    private readonly strategy: CompactStrategy,
    private readonly rewriter: CompactRewriter,
    private readonly options: CompactManagerOptions,
  ) {
    this.abort = options.abortController ?? new AbortController();
  }

  /** Whether the writer must wait for the running compaction before flushing more. */
  shouldWaitForLatestCompaction(): boolean {
    return this.levels.numberOfSortedRuns > this.options.numSortedRunStopTrigger;
  }

  /** Whether a commit must wait for the running compaction (one run beyond the stop trigger). */
  shouldWaitForPreparingCheckpoint(): boolean {
    return this.levels.numberOfSortedRuns > this.options.numSortedRunStopTrigger + 1;
  }

  /** Adds a file the writer just wrote (level 0). */
  addNewFile(file: DataFileMeta): void {
    this.levels.update([], [file]);
  }

  allFiles(): DataFileMeta[] {
    return this.levels.allFiles();
  }

  /** Whether a compaction is running or finished but not yet taken up. */
  get isCompacting(): boolean {
    return this.task !== null;
  }

  /**
   * Picks and starts a compaction unless one is running. `full` compacts every file into the max
   * level (and requires that no compaction is running: sync first).
   *
   * @returns the started unit, or null when nothing was worth compacting
   */
  triggerCompaction(full: boolean): CompactUnit | null {
    if (full && this.task !== null) {
      throw new CompactionError('a full compaction was requested while a compaction is still running; sync the running one first');
    }
    if (this.task !== null) return null;
    const runs = this.levels.levelSortedRuns();
    const unit = full ? pickFullCompaction(this.levels.numberOfLevels, runs) : this.strategy.pick(this.levels.numberOfLevels, runs);
    if (!isUsefulUnit(unit)) return null;
    // Retractions can only go when nothing older can exist below the output.
    const dropDelete =
      unit.outputLevel !== 0 && (unit.outputLevel >= this.levels.nonEmptyHighestLevel || (this.options.alwaysDropDelete ?? false));
    const options = { minFileSize: this.options.minFileSize, maxLevel: this.levels.maxLevel, dropDelete, compare: this.options.compare };
    this.done = null;
    const started = performance.now();
    this.task = runCompactTask(unit, this.rewriter, options).then(
      (result) => {
        this.done = { result };
        this.report(started, full, unit.outputLevel, result);
      },
      (error: unknown) => {
        this.done = { error };
      },
    );
    return unit;
  }

  private report(started: number, full: boolean, outputLevel: number, result: CompactResult): void {
    const listener = this.options.onCompacted;
    if (listener === undefined) return;
    const report = {
      durationMs: performance.now() - started,
      full,
      outputLevel,
      filesBefore: result.before.length,
      filesAfter: result.after.length,
    };
    try {
      listener(report);
    } catch {
      // A metrics listener must not fail the compaction.
    }
  }

  /**
   * Takes up the result of the running compaction: when it has finished, or (with `blocking`)
   * after waiting for it. The levels are updated with it.
   *
   * @returns the result, or null when none is ready (or none was running)
   * @throws whatever the compaction failed with
   */
  async getCompactionResult(blocking: boolean): Promise<CompactResult | null> {
    if (this.task === null) return null;
    if (blocking) await this.task;
    if (this.done === null) return null;
    const done = this.done;
    this.task = null;
    this.done = null;
    if ('error' in done) throw done.error;
    this.levels.update(done.result.before, done.result.after);
    return done.result;
  }

  /**
   * Stops the running compaction at its next batch and waits for it. A result that was already
   * complete is returned so the caller can delete the files it wrote; a failure is swallowed
   * (the compaction is being discarded).
   */
  async close(): Promise<CompactResult | null> {
    this.abort.abort();
    if (this.task === null) return null;
    await this.task;
    const done = this.done;
    this.task = null;
    this.done = null;
    return done !== null && 'result' in done ? done.result : null;
  }
}
