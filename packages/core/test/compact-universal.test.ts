/**
 * Picking decisions of primary-key compaction on synthetic files (no I/O): levels and sorted runs,
 * universal compaction's three rules and output levels, force-up of level 0, full compaction,
 * key-overlap sections, and which files a task upgrades instead of rewriting.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_SIMPLE_STATS, serializeBinaryRow, type DataFileMeta, type DataType } from '@tidemark/format';
import {
  ForceUpLevel0Compaction,
  Levels,
  SortedRun,
  UniversalCompaction,
  binaryRowKeyComparator,
  createUnit,
  intervalPartition,
  pickFullCompaction,
  runCompactTask,
  upgradeResult,
  type CompactRewriter,
  type LevelSortedRun,
} from '../src/index.js';

const INT: DataType = { root: 'INT', nullable: false } as DataType;
const key = (k: number): Uint8Array => serializeBinaryRow([INT], [k]);
const compare = binaryRowKeyComparator([INT]);

let seq = 0;
function file(o: {
  name?: string;
  level?: number;
  size?: number;
  min?: number;
  max?: number;
  maxSeq?: number;
  deletes?: number | null;
}): DataFileMeta {
  const s = BigInt(o.maxSeq ?? seq++);
  return {
    fileName: o.name ?? `f-${seq++}`,
    fileSize: o.size ?? 100,
    rowCount: 10,
    minKey: key(o.min ?? 0),
    maxKey: key(o.max ?? 100),
    keyStats: EMPTY_SIMPLE_STATS,
    valueStats: EMPTY_SIMPLE_STATS,
    minSequenceNumber: s,
    maxSequenceNumber: s,
    schemaId: 0,
    level: o.level ?? 0,
    extraFiles: [],
    creationTime: null,
    deleteRowCount: o.deletes === undefined ? 0 : o.deletes,
    embeddedIndex: null,
    fileSource: 0,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
    writeColsSequences: null,
  } as DataFileMeta;
}

/** Runs of the given sizes: level-0 runs first (newest first), then the given levels. */
function runs(...spec: [level: number, size: number][]): LevelSortedRun[] {
  return spec.map(([level, size]) => ({ level, run: SortedRun.fromSingle(file({ level, size })) }));
}
const sizesOf = (rs: readonly LevelSortedRun[]): number[] => rs.map((r) => r.run.totalSize);

const universal = new UniversalCompaction({ maxSizeAmplificationPercent: 200, sizeRatio: 1, numSortedRunCompactionTrigger: 5 });

describe('Levels', () => {
  it('orders level 0 newest first and keeps one run per higher level', () => {
    const a = file({ name: 'a', maxSeq: 5 });
    const b = file({ name: 'b', maxSeq: 9 });
    const c = file({ name: 'c', maxSeq: 9 });
    const l2x = file({ name: 'x', level: 2, min: 50, max: 60 });
    const l2y = file({ name: 'y', level: 2, min: 0, max: 10 });
    const levels = new Levels([a, l2x, b, c, l2y], 3, compare);
    expect(levels.level0Files.map((f) => f.fileName)).toEqual(['b', 'c', 'a']);
    expect(levels.runOfLevel(2).files.map((f) => f.fileName)).toEqual(['y', 'x']);
    expect(levels.numberOfSortedRuns).toBe(4);
    expect(levels.nonEmptyHighestLevel).toBe(2);
    expect(levels.levelSortedRuns().map((r) => r.level)).toEqual([0, 0, 0, 2]);
  });

  it('raises the number of levels to hold existing files and moves upgraded files', () => {
    const hi = file({ name: 'hi', level: 7 });
    const l0 = file({ name: 'l0' });
    const levels = new Levels([hi, l0], 3, compare);
    expect(levels.numberOfLevels).toBe(8);
    levels.update([l0], [{ ...l0, level: 4 }]);
    expect(levels.level0Files).toEqual([]);
    expect(levels.runOfLevel(4).files.map((f) => f.fileName)).toEqual(['l0']);
    expect(levels.allFiles().map((f) => `${f.fileName}@${f.level}`)).toEqual(['l0@4', 'hi@7']);
  });

  it('keeps overlapping files of one level (two concurrent writers) as one run, in key order', () => {
    const a = file({ name: 'a', level: 1, min: 10, max: 20 });
    const b = file({ name: 'b', level: 1, min: 0, max: 10 });
    const levels = new Levels([a, b], 3, compare);
    expect(levels.numberOfSortedRuns).toBe(1);
    expect(levels.runOfLevel(1).files.map((f) => f.fileName)).toEqual(['b', 'a']);
    // A compaction of that level re-partitions by overlap: both files land in one section.
    expect(intervalPartition(levels.runOfLevel(1).files, compare).map((s) => s.length)).toEqual([2]);
    expect(() => SortedRun.fromUnsorted([a, b], compare)).toThrow(/overlapping key ranges/);
  });
});

describe('UniversalCompaction', () => {
  it('picks nothing below the trigger', () => {
    expect(universal.pick(6, runs([0, 1], [0, 1], [0, 1], [0, 1]))).toBeNull();
  });

  it('size amplification compacts everything into the max level', () => {
    // 4 newer runs of 100 = 400 > 200 % of the oldest (150)
    const rs = runs([0, 100], [0, 100], [0, 100], [0, 100], [5, 150]);
    const unit = universal.pick(6, rs)!;
    expect(unit.outputLevel).toBe(5);
    expect(unit.files).toHaveLength(5);
    // 400 ≤ 200 % of 200: no amplification pick
    expect(universal.pickForSizeAmp(5, runs([0, 100], [0, 100], [0, 100], [0, 100], [5, 200]))).toBeNull();
  });

  it('size ratio absorbs runs while the next is at most 101 % of the candidates', () => {
    // 1, 1 (≤ 1.01), then 2 (≤ 2.02), then 100 stops; output = level of next (4) - 1 = 3
    const rs = runs([0, 1], [0, 1], [0, 2], [4, 100], [5, 1000]);
    const unit = universal.pick(6, rs)!;
    expect(sizesOf(rs.slice(0, 3))).toEqual(unit.files.map((f) => f.fileSize));
    expect(unit.outputLevel).toBe(3);
  });

  it('file-number rule forces the newest runs - trigger + 1 when ratios do not fire', () => {
    // 7 runs, sizes growing fast so neither amplification nor ratio fire; 7 - 5 + 1 = 3 forced
    const rs = runs([0, 1], [0, 10], [0, 100], [1, 1000], [2, 10_000], [3, 100_000], [5, 1_000_000]);
    expect(universal.pickForSizeAmp(5, rs)).toBeNull();
    expect(universal.pickForSizeRatio(5, rs)).toBeNull();
    const unit = universal.pick(6, rs)!;
    // three level-0 runs forced, then level 1 absorbed (level ≤ 1 joins once triggered), output = 2 - 1 = 1
    expect(unit.files.map((f) => f.fileSize)).toEqual([1, 10, 100, 1000]);
    expect(unit.outputLevel).toBe(1);
  });

  it('never outputs to level 0: absorbs runs until a higher level', () => {
    const rs = runs([0, 1], [0, 1], [0, 500], [0, 500], [3, 5000]);
    const unit = createUnit(rs, 5, 2);
    expect(unit.files).toHaveLength(5);
    expect(unit.outputLevel).toBe(5); // every run taken: max level
    const rs2 = runs([0, 1], [0, 1], [0, 500], [3, 5000], [4, 9000]);
    const unit2 = createUnit(rs2, 5, 2);
    expect(unit2.files.map((f) => f.fileSize)).toEqual([1, 1, 500, 5000]);
    expect(unit2.outputLevel).toBe(3);
  });

  it('force-up-level-0 compacts level 0 when universal picks nothing', () => {
    const force = new ForceUpLevel0Compaction(universal);
    const rs = runs([0, 1], [0, 1], [3, 5000], [5, 9000]);
    expect(universal.pick(6, rs)).toBeNull();
    const unit = force.pick(6, rs)!;
    expect(unit.files.map((f) => f.fileSize)).toEqual([1, 1]);
    expect(unit.outputLevel).toBe(2);
    expect(force.pick(6, runs([3, 5000], [5, 9000]))).toBeNull();
  });

  it('full compaction takes every run into the max level, or nothing when already there', () => {
    const rs = runs([0, 1], [2, 10], [4, 100]);
    expect(pickFullCompaction(6, rs)!.outputLevel).toBe(5);
    expect(pickFullCompaction(6, rs)!.files).toHaveLength(3);
    expect(pickFullCompaction(6, runs([5, 100]))).toBeNull();
    expect(pickFullCompaction(6, [])).toBeNull();
    expect(pickFullCompaction(6, runs([4, 100]))!.outputLevel).toBe(5);
  });
});

describe('intervalPartition', () => {
  it('splits into key-disjoint sections and packs each into few runs', () => {
    const a = file({ name: 'a', min: 0, max: 10 });
    const b = file({ name: 'b', min: 5, max: 20 });
    const c = file({ name: 'c', min: 15, max: 25 });
    const d = file({ name: 'd', min: 30, max: 40 });
    const sections = intervalPartition([d, c, b, a], compare);
    expect(sections.map((s) => s.map((r) => r.files.map((f) => f.fileName)))).toEqual([[['a', 'c'], ['b']], [['d']]]);
  });
});

describe('runCompactTask', () => {
  const calls: string[] = [];
  const rewriter: CompactRewriter = {
    rewrite: async (level, dropDelete, sections) => {
      const files = sections.flatMap((s) => s.flatMap((r) => r.files));
      calls.push(`rewrite@${level}${dropDelete ? '!' : ''}:${files.map((f) => f.fileName).join(',')}`);
      return { before: files, after: [file({ name: `out-${files.length}`, level })] };
    },
    upgrade: async (level, f) => {
      calls.push(`upgrade@${level}:${f.fileName}`);
      return upgradeResult(level, f);
    },
  };

  it('upgrades large non-overlapping files, merges overlapping and small ones', async () => {
    calls.length = 0;
    const big = file({ name: 'big', min: 0, max: 10, size: 1000 });
    const o1 = file({ name: 'o1', min: 20, max: 30, size: 1000 });
    const o2 = file({ name: 'o2', min: 25, max: 35, size: 1000 });
    const small = file({ name: 'small', min: 40, max: 50, size: 10 });
    const big2 = file({ name: 'big2', min: 60, max: 70, size: 1000, deletes: 3 });
    const result = await runCompactTask({ outputLevel: 3, files: [big, o1, o2, small, big2] }, rewriter, {
      minFileSize: 700,
      maxLevel: 5,
      dropDelete: false,
      compare,
    });
    expect(calls).toEqual(['upgrade@3:big', 'rewrite@3:o1,o2,small', 'upgrade@3:big2']);
    expect(result.before.map((f) => f.fileName)).toEqual(['big', 'o1', 'o2', 'small', 'big2']);
    expect(result.after.find((f) => f.fileName === 'big')!.level).toBe(3);
  });

  it('rewrites a large file with retractions (or unknown count) that goes to the max level', async () => {
    calls.length = 0;
    const dels = file({ name: 'dels', min: 0, max: 10, size: 1000, deletes: 2 });
    const unknown = file({ name: 'unknown', min: 20, max: 30, size: 1000, deletes: null });
    const clean = file({ name: 'clean', min: 40, max: 50, size: 1000, deletes: 0 });
    await runCompactTask({ outputLevel: 5, files: [dels, unknown, clean] }, rewriter, {
      minFileSize: 700,
      maxLevel: 5,
      dropDelete: true,
      compare,
    });
    expect(calls).toEqual(['rewrite@5!:dels', 'rewrite@5!:unknown', 'upgrade@5:clean']);
  });

  it('leaves a large file already in the output level alone', async () => {
    calls.length = 0;
    const top = file({ name: 'top', level: 5, min: 0, max: 10, size: 1000 });
    const l0 = file({ name: 'l0', min: 20, max: 30, size: 1000 });
    const result = await runCompactTask({ outputLevel: 5, files: [l0, top] }, rewriter, {
      minFileSize: 700,
      maxLevel: 5,
      dropDelete: true,
      compare,
    });
    expect(calls).toEqual(['upgrade@5:l0']);
    expect(result.before.map((f) => f.fileName)).toEqual(['l0']);
  });
});
