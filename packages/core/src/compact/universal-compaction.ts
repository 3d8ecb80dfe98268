/**
 * Picking what a primary-key bucket compacts, with Paimon's rules (universal compaction, after
 * RocksDB's): runs are considered in the order of {@link Levels.levelSortedRuns} (level-0 files
 * newest first, then levels 1..max), and a pick is always a prefix of that list, compacted into
 * one output level.
 */
import type { DataFileMeta } from '@tidemark/format';
import type { LevelSortedRun } from './sorted-run.js';

/** Files to compact together and the level their output goes to. */
export interface CompactUnit {
  readonly outputLevel: number;
  readonly files: readonly DataFileMeta[];
  /**
   * Rewrite each file alone instead of merging (Java's `fileRewrite`): a full compaction of a
   * bucket already in one top-level run, purging the rows its files' deletion vectors delete.
   */
  readonly fileRewrite?: boolean;
}

/** The unit compacting all files of `runs` (in run order) into `outputLevel`. */
export function unitOfRuns(outputLevel: number, runs: readonly LevelSortedRun[]): CompactUnit {
  return { outputLevel, files: runs.flatMap((r) => r.run.files) };
}

/** Settings of {@link UniversalCompaction} (Paimon option names in parentheses). */
export interface UniversalCompactionOptions {
  /** `compaction.max-size-amplification-percent` (200). */
  readonly maxSizeAmplificationPercent: number;
  /** `compaction.size-ratio` (1): percentage of flexibility when comparing run sizes. */
  readonly sizeRatio: number;
  /** `num-sorted-run.compaction-trigger` (5). */
  readonly numSortedRunCompactionTrigger: number;
}

/** A compaction strategy: given the runs, what (if anything) to compact. */
export interface CompactStrategy {
  pick(numLevels: number, runs: readonly LevelSortedRun[]): CompactUnit | null;
}

/**
 * Universal compaction. In order, the first rule that fires decides:
 * 1. size amplification: with at least `trigger` runs, when all runs but the oldest together
 *    exceed `maxSizeAmp`% of the oldest, everything is compacted into the max level;
 * 2. size ratio: with at least `trigger` runs, starting from the newest run, the next run is
 *    absorbed while it is no larger than the candidates so far plus `sizeRatio`%;
 * 3. run count: with more than `trigger` runs, the newest `runs − trigger + 1` are forced in and
 *    then extended by size ratio.
 */
export class UniversalCompaction implements CompactStrategy {
  constructor(private readonly options: UniversalCompactionOptions) {}

  pick(numLevels: number, runs: readonly LevelSortedRun[]): CompactUnit | null {
    const maxLevel = numLevels - 1;
    const amp = this.pickForSizeAmp(maxLevel, runs);
    if (amp !== null) return amp;
    const ratio = this.pickForSizeRatio(maxLevel, runs);
    if (ratio !== null) return ratio;
    const trigger = this.options.numSortedRunCompactionTrigger;
    if (runs.length > trigger) return this.pickForSizeRatioFrom(maxLevel, runs, runs.length - trigger + 1, false);
    return null;
  }

  /** Rule 1; null when it does not fire. */
  pickForSizeAmp(maxLevel: number, runs: readonly LevelSortedRun[]): CompactUnit | null {
    if (runs.length < this.options.numSortedRunCompactionTrigger) return null;
    let candidateSize = 0;
    for (let i = 0; i < runs.length - 1; i++) candidateSize += runs[i]!.run.totalSize;
    const earliestRunSize = runs[runs.length - 1]!.run.totalSize;
    if (candidateSize * 100 > this.options.maxSizeAmplificationPercent * earliestRunSize) return unitOfRuns(maxLevel, runs);
    return null;
  }

  /** Rule 2; null when it does not fire. */
  pickForSizeRatio(maxLevel: number, runs: readonly LevelSortedRun[]): CompactUnit | null {
    if (runs.length < this.options.numSortedRunCompactionTrigger) return null;
    return this.pickForSizeRatioFrom(maxLevel, runs, 1, false);
  }

  /**
   * Takes the first `candidateCount` runs and absorbs following runs by size ratio. A pick of a
   * single run only counts when `forcePick`. Once the pick has fired, runs of level 0 and 1 are
   * absorbed regardless of size (so that the output level is above them).
   */
  pickForSizeRatioFrom(maxLevel: number, runs: readonly LevelSortedRun[], candidateCount: number, forcePick: boolean): CompactUnit | null {
    let count = candidateCount;
    let candidateSize = 0;
    for (let i = 0; i < count; i++) candidateSize += runs[i]!.run.totalSize;
    let triggered = forcePick || count > 1;
    for (let i = count; i < runs.length; i++) {
      const next = runs[i]!;
      if ((candidateSize * (100 + this.options.sizeRatio)) / 100 < next.run.totalSize) {
        if (!triggered || next.level > 1) break;
      }
      candidateSize += next.run.totalSize;
      count++;
      triggered = true;
    }
    return triggered ? createUnit(runs, maxLevel, count) : null;
  }

  /** All level-0 runs (and what size ratio adds), or null when level 0 is empty. */
  forcePickLevel0(numLevels: number, runs: readonly LevelSortedRun[]): CompactUnit | null {
    let count = 0;
    while (count < runs.length && runs[count]!.level === 0) count++;
    return count === 0 ? null : this.pickForSizeRatioFrom(numLevels - 1, runs, count, true);
  }
}

/**
 * Universal compaction that, when it picks nothing, still compacts all level-0 files upward.
 * Paimon uses it where level 0 must not linger: tables whose reads skip level 0 (the first-row
 * merge engine, deletion vectors, the lookup changelog producer) and `compaction.force-up-level-0`.
 */
export class ForceUpLevel0Compaction implements CompactStrategy {
  constructor(private readonly universal: UniversalCompaction) {}

  pick(numLevels: number, runs: readonly LevelSortedRun[]): CompactUnit | null {
    return this.universal.pick(numLevels, runs) ?? this.universal.forcePickLevel0(numLevels, runs);
  }
}

/**
 * The output level for the first `runCount` runs: one below the first run left out, but never 0
 * (then further runs are absorbed until a run of level ≥ 1 is taken, which becomes the output
 * level); when every run is taken, the max level.
 */
export function createUnit(runs: readonly LevelSortedRun[], maxLevel: number, runCount: number): CompactUnit {
  let count = runCount;
  let outputLevel = count === runs.length ? maxLevel : Math.max(0, runs[count]!.level - 1);
  if (outputLevel === 0) {
    for (let i = count; i < runs.length; i++) {
      const next = runs[i]!;
      count++;
      if (next.level !== 0) {
        outputLevel = next.level;
        break;
      }
    }
  }
  if (count === runs.length) outputLevel = maxLevel;
  return unitOfRuns(outputLevel, runs.slice(0, count));
}

/**
 * A full compaction: every file into the max level. When the bucket is a single run already at the
 * max level, only its files for which `hasDeletionVector` is true, each rewritten alone (as Java's
 * full compaction picks the top-level files with a vector); null when there are none, or no runs.
 */
export function pickFullCompaction(
  numLevels: number,
  runs: readonly LevelSortedRun[],
  hasDeletionVector?: (file: DataFileMeta) => boolean,
): CompactUnit | null {
  const maxLevel = numLevels - 1;
  if (runs.length === 0) return null;
  if (runs.length === 1 && runs[0]!.level === maxLevel) {
    const files = hasDeletionVector ? runs[0]!.run.files.filter(hasDeletionVector) : [];
    return files.length === 0 ? null : { outputLevel: maxLevel, files, fileRewrite: true };
  }
  return unitOfRuns(maxLevel, runs);
}

/**
 * Whether a unit is worth running: it has files, and is not a single file that stays in its level
 * (unless the unit rewrites its files in place).
 */
export function isUsefulUnit(unit: CompactUnit | null): unit is CompactUnit {
  if (unit === null || unit.files.length === 0) return false;
  return unit.fileRewrite === true || unit.files.length > 1 || unit.files[0]!.level !== unit.outputLevel;
}
