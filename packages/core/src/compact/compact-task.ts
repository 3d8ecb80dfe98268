/**
 * Carrying out one compaction unit as Paimon's merge-tree compaction task does: the unit's files
 * are split into key-disjoint sections; sections of several runs are merged, while a large file
 * that overlaps nothing is only moved to the output level ("upgraded": same file, new level),
 * unless it holds retractions and goes to the max level, where they must be dropped. Small files
 * that overlap nothing are merged with their neighbours so they do not pile up. Adjacent sections
 * are never skipped over, which keeps the output ordered.
 */
import type { DataFileMeta } from '@tidemark/format';
import { intervalPartition } from './interval-partition.js';
import { SortedRun, type KeyComparator } from './sorted-run.js';
import type { CompactUnit } from './universal-compaction.js';

/** Files a compaction removed and the files that replace them. */
export interface CompactResult {
  readonly before: DataFileMeta[];
  readonly after: DataFileMeta[];
  /** Changelog files the compaction produced (`changelog-producer` = `lookup` or `full-compaction`). */
  readonly changelog?: DataFileMeta[];
}

/** Writes the output of a compaction. */
export interface CompactRewriter {
  /**
   * Merges the sections (each a list of sorted runs, sections in key order) into new files of
   * `outputLevel`; retractions are dropped when `dropDelete`.
   */
  rewrite(outputLevel: number, dropDelete: boolean, sections: readonly (readonly SortedRun[])[]): Promise<CompactResult>;
  /** Moves a file to `outputLevel` without rewriting it. */
  upgrade(outputLevel: number, file: DataFileMeta): Promise<CompactResult>;
}

/** Settings of {@link runCompactTask}. */
export interface CompactTaskOptions {
  /** Files of at least this size are upgraded rather than rewritten (Paimon: 70 % of `target-file-size`). */
  readonly minFileSize: number;
  readonly maxLevel: number;
  readonly dropDelete: boolean;
  readonly compare: KeyComparator;
  /**
   * Full compactions of deletion-vector buckets: a file already on the output level for which this
   * is true is rewritten alone (its deleted rows purged) instead of being left as it is.
   */
  readonly rewriteInPlace?: (file: DataFileMeta) => boolean;
}

/** The level-change-only result of moving `file` to `outputLevel`. */
export function upgradeResult(outputLevel: number, file: DataFileMeta): CompactResult {
  return { before: [file], after: [{ ...file, level: outputLevel }] };
}

/** Runs one unit with `rewriter`, returning what it replaced. */
export async function runCompactTask(unit: CompactUnit, rewriter: CompactRewriter, options: CompactTaskOptions): Promise<CompactResult> {
  const outputLevel = unit.outputLevel;
  const result = { before: [] as DataFileMeta[], after: [] as DataFileMeta[], changelog: [] as DataFileMeta[] };
  const merge = (r: CompactResult): void => {
    result.before.push(...r.before);
    result.after.push(...r.after);
    result.changelog.push(...(r.changelog ?? []));
  };
  let candidate: SortedRun[][] = [];
  const rewriteAlone = async (file: DataFileMeta): Promise<void> =>
    merge(await rewriter.rewrite(outputLevel, options.dropDelete, [[SortedRun.fromSingle(file)]]));

  if (unit.fileRewrite === true) {
    for (const file of unit.files) await rewriteAlone(file);
    keepSequenceMaximum(result.before, result.after);
    return result.changelog.length > 0 ? result : { before: result.before, after: result.after };
  }

  const rewriteCandidate = async (): Promise<void> => {
    if (candidate.length === 0) return;
    if (candidate.length === 1 && candidate[0]!.length <= 1) {
      // One run of non-overlapping files needs no merge.
      const only = candidate[0]![0];
      candidate = [];
      for (const f of only?.files ?? []) await upgrade(f);
      return;
    }
    const sections = candidate;
    candidate = [];
    merge(await rewriter.rewrite(outputLevel, options.dropDelete, sections));
  };

  const upgrade = async (file: DataFileMeta): Promise<void> => {
    if (file.level === outputLevel) {
      if (options.rewriteInPlace?.(file) === true) await rewriteAlone(file);
      return;
    }
    const noDeletes = file.deleteRowCount === 0;
    if (outputLevel !== options.maxLevel || noDeletes) merge(await rewriter.upgrade(outputLevel, file));
    // Retractions must not reach the max level: rewrite the file alone, dropping them.
    else await rewriteAlone(file);
  };

  for (const section of intervalPartition(unit.files, options.compare)) {
    if (section.length > 1) {
      candidate.push(section);
      continue;
    }
    for (const file of section[0]!.files) {
      if (file.fileSize < options.minFileSize) {
        candidate.push([SortedRun.fromSingle(file)]);
      } else {
        await rewriteCandidate();
        await upgrade(file);
      }
    }
  }
  await rewriteCandidate();
  keepSequenceMaximum(result.before, result.after);
  return result.changelog.length > 0 ? result : { before: result.before, after: result.after };
}

/**
 * Raises the highest `maxSequenceNumber` among the files a unit rewrote to that of its inputs when
 * the merge dropped the record that held it (a retraction dropped on the way to the top level, a
 * record a deletion vector marked, a later row a first-row table ignores). A writer continues a
 * bucket's numbering above its live files' maximum (as Java's does); without this it would reuse
 * numbers already committed, and a commit that saw them committed would re-sequence its files and
 * drop its compaction. The range stays a bound of the file's rows, only wider than they need, as
 * an append compaction's output is. A file only moved up a level keeps its meta, as in Java; when
 * no rewritten file is left, the commit's guard reads the live maximum instead (sequence-order.ts).
 */
function keepSequenceMaximum(before: readonly DataFileMeta[], after: DataFileMeta[]): void {
  if (before.length === 0 || after.length === 0) return;
  let max = before[0]!.maxSequenceNumber;
  for (const f of before) if (f.maxSequenceNumber > max) max = f.maxSequenceNumber;
  const moved = new Set(before.map((f) => f.fileName));
  let carrier = -1;
  for (let i = 0; i < after.length; i++) {
    const f = after[i]!;
    if (f.maxSequenceNumber >= max) return;
    if (!moved.has(f.fileName) && (carrier < 0 || f.maxSequenceNumber >= after[carrier]!.maxSequenceNumber)) carrier = i;
  }
  if (carrier >= 0) after[carrier] = { ...after[carrier]!, maxSequenceNumber: max };
}
