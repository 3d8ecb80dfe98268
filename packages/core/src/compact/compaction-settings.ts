/**
 * The compaction settings of a primary-key table, from its options (Paimon names and defaults),
 * and the strategy they imply.
 */
import type { TableSchema } from '@tidemark/format';
import { tableOptions } from '../core-options.js';
import { CompactionArgumentError } from './compact-errors.js';
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
  /** `full-compaction.delta-commits`, or null. */
  readonly fullCompactionDeltaCommits: number | null;
  /** `write-only` (false): writers never compact. */
  readonly writeOnly: boolean;
  /**
   * Level 0 is always compacted upward after a flush: `compaction.force-up-level-0`, or a table
   * whose reads skip level 0 (merge engine first-row).
   */
  readonly forceUpLevel0: boolean;
}

/** Reads the compaction settings of a primary-key table. */
export function compactionSettings(schema: Pick<TableSchema, 'options' | 'primaryKeys'>): CompactionSettings {
  const options = tableOptions(schema);
  const int = (name: string, fallback: number, min: number): number => {
    const raw = options.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw.trim());
    if (raw.trim() === '' || !Number.isInteger(n) || n < min) {
      throw new CompactionArgumentError(`table option '${name}' = '${raw}' must be an integer of at least ${min}`);
    }
    return n;
  };
  const bool = (name: string): boolean => (options.get(name) ?? 'false').trim().toLowerCase() === 'true';
  const trigger = int('num-sorted-run.compaction-trigger', 5, 1);
  const stop = Math.max(trigger, int('num-sorted-run.stop-trigger', trigger + 3, 1));
  const deltaCommits = options.get('full-compaction.delta-commits') === undefined ? null : int('full-compaction.delta-commits', 1, 1);
  const engine = (options.get('merge-engine') ?? 'deduplicate').trim().toLowerCase();
  return {
    numLevels: int('num-levels', trigger + 1, 2),
    numSortedRunCompactionTrigger: trigger,
    numSortedRunStopTrigger: stop,
    maxSizeAmplificationPercent: int('compaction.max-size-amplification-percent', 200, 0),
    sizeRatio: int('compaction.size-ratio', 1, 0),
    compactionFileSize: Math.floor(options.targetFileSize / 10) * 7,
    targetFileSize: options.targetFileSize,
    fullCompactionDeltaCommits: deltaCommits,
    writeOnly: bool('write-only'),
    forceUpLevel0: bool('compaction.force-up-level-0') || engine === 'first-row',
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
