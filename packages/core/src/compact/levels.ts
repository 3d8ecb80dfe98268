/**
 * The LSM levels of one primary-key bucket, as Paimon keeps them: level 0 holds files that may
 * overlap, each its own sorted run, newest first (larger max sequence number first, then by file
 * name so that files of equal sequence from concurrent writers stay apart); each level 1..n-1 is
 * one sorted run of non-overlapping files.
 */
import type { DataFileMeta } from '@tidemark/format';
import { CompactionError } from './compact-errors.js';
import { SortedRun, type KeyComparator, type LevelSortedRun } from './sorted-run.js';

/** Level-0 order: newest (largest max sequence number) first, then by file name. */
export function compareLevel0(a: DataFileMeta, b: DataFileMeta): number {
  if (a.maxSequenceNumber !== b.maxSequenceNumber) return a.maxSequenceNumber > b.maxSequenceNumber ? -1 : 1;
  return a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0;
}

/** The files of one bucket arranged in levels and sorted runs. */
export class Levels {
  private level0: DataFileMeta[] = [];
  /** Run of level i+1 at index i. */
  private readonly runs: SortedRun[] = [];

  /**
   * @param files the bucket's live files (their `level` decides where they go)
   * @param numLevels `num-levels`; raised to hold the highest level a file already has
   * @param where names the bucket in error messages
   * Files of one level ≥ 1 normally never overlap; they can when two lock-free writers compacted
   * disjoint inputs of one bucket at the same time. Such a level still counts as one run: every
   * compaction re-partitions its inputs by key overlap, so merging it is correct, and merges it.
   *
   * @throws CompactionError when fewer than two levels result
   */
  constructor(
    files: readonly DataFileMeta[],
    numLevels: number,
    private readonly compare: KeyComparator,
    private readonly where = 'bucket',
  ) {
    const highest = files.reduce((m, f) => Math.max(m, f.level), -1);
    const levels = Math.max(numLevels, highest + 1);
    if (levels < 2) throw new CompactionError(`${where}: the number of levels must be at least 2, got ${levels}`);
    for (let i = 1; i < levels; i++) this.runs.push(SortedRun.empty());
    this.update([], files);
  }

  /** Number of levels (`num-levels`, or more when files already live higher). */
  get numberOfLevels(): number {
    return this.runs.length + 1;
  }

  get maxLevel(): number {
    return this.runs.length;
  }

  /** Level-0 files, newest first. */
  get level0Files(): readonly DataFileMeta[] {
    return this.level0;
  }

  /** The sorted run of a level ≥ 1. */
  runOfLevel(level: number): SortedRun {
    if (level < 1 || level > this.runs.length) throw new RangeError(`level ${level} has no single sorted run`);
    return this.runs[level - 1]!;
  }

  /** Level-0 files plus one per non-empty higher level. */
  get numberOfSortedRuns(): number {
    let n = this.level0.length;
    for (const r of this.runs) if (!r.isEmpty) n++;
    return n;
  }

  /** The highest non-empty level, or -1 when the bucket has no files. */
  get nonEmptyHighestLevel(): number {
    for (let i = this.runs.length - 1; i >= 0; i--) if (!this.runs[i]!.isEmpty) return i + 1;
    return this.level0.length > 0 ? 0 : -1;
  }

  /** Runs in picking order: level-0 files newest first, then levels 1..max. */
  levelSortedRuns(): LevelSortedRun[] {
    const out: LevelSortedRun[] = this.level0.map((f) => ({ level: 0, run: SortedRun.fromSingle(f) }));
    this.runs.forEach((run, i) => {
      if (!run.isEmpty) out.push({ level: i + 1, run });
    });
    return out;
  }

  /** Every file, in run order. */
  allFiles(): DataFileMeta[] {
    return this.levelSortedRuns().flatMap((r) => r.run.files);
  }

  get totalFileSize(): number {
    return this.allFiles().reduce((s, f) => s + f.fileSize, 0);
  }

  /**
   * Replaces `before` by `after` (a compaction result, or new files with `before` empty). Files are
   * matched by name and level, so an upgraded file (same name, new level) moves.
   */
  update(before: readonly DataFileMeta[], after: readonly DataFileMeta[]): void {
    for (const f of after) {
      if (f.level < 0 || f.level > this.maxLevel) {
        throw new CompactionError(`${this.where}: file '${f.fileName}' has level ${f.level}, outside 0..${this.maxLevel}`);
      }
    }
    const gone = new Set(before.map((f) => `${f.level}|${f.fileName}`));
    const touched = new Set<number>([...before.map((f) => f.level), ...after.map((f) => f.level)]);
    for (const level of touched) {
      const kept = (level === 0 ? this.level0 : level <= this.maxLevel ? this.runs[level - 1]!.files : []).filter(
        (f) => !gone.has(`${f.level}|${f.fileName}`),
      );
      const names = new Set(kept.map((f) => f.fileName));
      for (const f of after) {
        if (f.level === level && !names.has(f.fileName)) {
          kept.push(f);
          names.add(f.fileName);
        }
      }
      if (level === 0) this.level0 = kept.sort(compareLevel0);
      else if (level <= this.maxLevel) {
        this.runs[level - 1] = SortedRun.fromUnsorted(kept, this.compare, `${this.where}, level ${level}`, false);
      }
    }
  }
}
