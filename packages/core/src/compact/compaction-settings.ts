/**
 * The compaction settings of a primary-key table, from its options (Paimon names and defaults),
 * and the strategy they imply.
 */
import type { TableSchema } from '@tidemark/format';
import { coreOptions } from '../core-options.js';
import { ForceUpLevel0Compaction, UniversalCompaction, type CompactStrategy } from './universal-compaction.js';

/** What primary-key compaction reads from the table options. */
export interface CompactionSettings {
  /** `num-levels` (default trigger + 1). */
  readonly numLevels: number;
  /** `num-sorted-run.compaction-trigger` (5). */
  readonly numSortedRunCompactionTrigger: number;
  /** `num-sorted-run.stop-trigger` (trigger + 3, at least the trigger). */
  readonly numSortedRunStopTrigger: number;
  /** `compaction.max-size-amplification-percent` (200). */
  readonly maxSizeAmplificationPercent: number;
  /** `compaction.size-ratio` (1). */
  readonly sizeRatio: number;
  /** Files of at least this size are moved up a level instead of rewritten: 70 % of `target-file-size`. */
  readonly compactionFileSize: number;
  /** `target-file-size`: compaction output rolls to a new file at this size. */
  readonly targetFileSize: number;
  /** `full-compaction.delta-commits` (1 for the full-compaction changelog producer when unset), or null. */
  readonly fullCompactionDeltaCommits: number | null;
  /** `write-only` (false): writers never compact. */
  readonly writeOnly: boolean;
  /**
   * Level 0 is always compacted upward after a flush: `compaction.force-up-level-0`, or a table
   * whose reads skip level 0 (merge engine first-row, deletion vectors), or whose changelog comes
   * from compacting level 0 (`changelog-producer` = `lookup`).
   */
  readonly forceUpLevel0: boolean;
}

/** Reads the compaction settings of a primary-key table. */
export function compactionSettings(schema: Pick<TableSchema, 'options' | 'primaryKeys'>): CompactionSettings {
  const options = coreOptions(schema);
  return {
    numLevels: options.numLevels,
    numSortedRunCompactionTrigger: options.numSortedRunCompactionTrigger,
    numSortedRunStopTrigger: options.numSortedRunStopTrigger,
    maxSizeAmplificationPercent: options.compactionMaxSizeAmplificationPercent,
    sizeRatio: options.compactionSizeRatio,
    // Paimon: target / 10 * 7 in integer arithmetic.
    compactionFileSize: Math.floor(options.targetFileSize / 10) * 7,
    targetFileSize: options.targetFileSize,
    // The full-compaction producer needs full compactions: every commit unless set (as Paimon's sinks do).
    fullCompactionDeltaCommits: options.fullCompactionDeltaCommits ?? (options.changelogProducer === 'full-compaction' ? 1 : null),
    writeOnly: options.writeOnly,
    forceUpLevel0:
      options.compactionForceUpLevel0 ||
      options.mergeEngine === 'first-row' ||
      options.changelogProducer === 'lookup' ||
      options.deletionVectorsEnabled,
  };
}

/** The strategy a writer uses to pick compactions: universal, forcing level 0 up where needed. */
export function compactStrategy(settings: CompactionSettings): CompactStrategy {
  const universal = new UniversalCompaction({
    maxSizeAmplificationPercent: settings.maxSizeAmplificationPercent,
    sizeRatio: settings.sizeRatio,
    numSortedRunCompactionTrigger: settings.numSortedRunCompactionTrigger,
  });
  return settings.forceUpLevel0 ? new ForceUpLevel0Compaction(universal) : universal;
}
