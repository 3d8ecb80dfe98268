/**
 * The writer side of primary-key compaction on synthetic files (no I/O): compaction starts after
 * the flush that reaches the trigger, results are handed out at commit as compactBefore /
 * compactAfter, outputs compacted again before any commit are deleted at once, a full compaction
 * runs every `full-compaction.delta-commits` commits, and abort deletes uncommitted outputs.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_SIMPLE_STATS, serializeBinaryRow, type DataFileMeta, type DataType } from '@tidemark/format';
import {
  Levels,
  MergeTreeCompactManager,
  UniversalCompaction,
  WriterCompaction,
  binaryRowKeyComparator,
  upgradeResult,
  type CompactRewriter,
} from '../src/index.js';

const INT: DataType = { root: 'INT', nullable: false } as DataType;
const compare = binaryRowKeyComparator([INT]);
let n = 0;

function file(level: number, size: number, seq: number): DataFileMeta {
  return {
    fileName: `f-${n++}`,
    fileSize: size,
    rowCount: 1,
    minKey: serializeBinaryRow([INT], [0]),
    maxKey: serializeBinaryRow([INT], [100]),
    keyStats: EMPTY_SIMPLE_STATS,
    valueStats: EMPTY_SIMPLE_STATS,
    minSequenceNumber: BigInt(seq),
    maxSequenceNumber: BigInt(seq),
    schemaId: 0,
    level,
    extraFiles: [],
    creationTime: null,
    deleteRowCount: 0,
    embeddedIndex: null,
    fileSource: 0,
    valueStatsCols: null,
    externalPath: null,
    firstRowId: null,
    writeCols: null,
    writeColsSequences: null,
  } as DataFileMeta;
}

/** A rewriter that merges everything into one file of the summed size. */
function fakeRewriter(log: string[]): CompactRewriter {
  return {
    rewrite: async (level, _drop, sections) => {
      const files = sections.flatMap((s) => s.flatMap((r) => r.files));
      const out = file(
        level,
        files.reduce((s, f) => s + f.fileSize, 0),
        Number(files.reduce((m, f) => (f.maxSequenceNumber > m ? f.maxSequenceNumber : m), 0n)),
      );
      log.push(`rewrite ${files.map((f) => f.fileName).join(',')} -> ${out.fileName}@${level}`);
      return { before: files, after: [out] };
    },
    upgrade: async (level, f) => upgradeResult(level, f),
  };
}

function writer(opts: { restore?: DataFileMeta[]; deltaCommits?: number | null; stop?: number }, log: string[], deleted: string[]) {
  const universal = new UniversalCompaction({ maxSizeAmplificationPercent: 200, sizeRatio: 1, numSortedRunCompactionTrigger: 3 });
  return new WriterCompaction({
    open: async () =>
      new MergeTreeCompactManager(new Levels(opts.restore ?? [], 4, compare), universal, fakeRewriter(log), {
        minFileSize: 1_000_000,
        numSortedRunStopTrigger: opts.stop ?? 5,
        compare,
      }),
    fullCompactionDeltaCommits: opts.deltaCommits ?? null,
    deleteFiles: async (files) => {
      deleted.push(...files.map((f) => f.fileName));
    },
  });
}

describe('WriterCompaction', () => {
  it('compacts once the trigger is reached and hands the result out at commit', async () => {
    const log: string[] = [];
    const deleted: string[] = [];
    const w = writer({}, log, deleted);
    const flushed = [file(0, 10, 1), file(0, 10, 2), file(0, 10, 3)];
    for (const f of flushed) await w.onFlush([f]);
    const inc = await w.prepareCommit();
    expect(log).toHaveLength(1);
    expect(inc.compactBefore.map((f) => f.fileName).sort()).toEqual(flushed.map((f) => f.fileName).sort());
    expect(inc.compactAfter).toHaveLength(1);
    expect(inc.compactAfter[0]!.level).toBe(3);
    expect(deleted).toEqual([]);
    // Handed out once: the next commit carries nothing new.
    expect(await w.prepareCommit()).toEqual({ compactBefore: [], compactAfter: [] });
  });

  it('deletes an output that is compacted again before it was committed', async () => {
    const log: string[] = [];
    const deleted: string[] = [];
    const base = file(3, 10_000, 0);
    const w = writer({ restore: [base] }, log, deleted);
    // First compaction: three level-0 files -> level 2 (one below the level-3 base).
    for (let i = 1; i <= 3; i++) await w.onFlush([file(0, 10, i)]);
    // Second: two more level-0 files and the level-2 output.
    for (let i = 4; i <= 6; i++) await w.onFlush([file(0, 10, i)]);
    const inc = await w.prepareCommit();
    expect(log.length).toBeGreaterThanOrEqual(2);
    const firstOut = log[0]!.split(' -> ')[1]!.split('@')[0]!;
    expect(log.slice(1).some((l) => l.split(' -> ')[0]!.includes(firstOut))).toBe(true);
    expect(deleted).toContain(firstOut);
    expect(inc.compactBefore.map((f) => f.fileName)).not.toContain(firstOut);
    expect(inc.compactAfter.map((f) => f.fileName)).not.toContain(firstOut);
  });

  it('runs a full compaction every full-compaction.delta-commits commits', async () => {
    const log: string[] = [];
    const w = writer({ restore: [file(3, 10_000, 0)], deltaCommits: 2 }, log, []);
    await w.onFlush([file(0, 10, 1)]);
    expect((await w.prepareCommit()).compactAfter).toEqual([]);
    await w.onFlush([file(0, 10, 2)]);
    const inc = await w.prepareCommit();
    expect(inc.compactAfter.map((f) => f.level)).toEqual([3]);
    expect(inc.compactBefore).toHaveLength(3);
  });

  it('abort deletes outputs that were not committed', async () => {
    const log: string[] = [];
    const deleted: string[] = [];
    const w = writer({}, log, deleted);
    for (let i = 1; i <= 3; i++) await w.onFlush([file(0, 10, i)]);
    await w.abort();
    const out = log[0]!.split(' -> ')[1]!.split('@')[0]!;
    expect(deleted).toEqual([out]);
  });

  it('waits for the running compaction once the bucket has more runs than the stop trigger', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const slow: CompactRewriter = {
      rewrite: async (level, _drop, sections) => {
        started++;
        await gate;
        const files = sections.flatMap((sec) => sec.flatMap((r) => r.files));
        return { before: files, after: [file(level, 30, 99)] };
      },
      upgrade: async (level, f) => upgradeResult(level, f),
    };
    const universal = new UniversalCompaction({ maxSizeAmplificationPercent: 200, sizeRatio: 1, numSortedRunCompactionTrigger: 3 });
    const w = new WriterCompaction({
      open: async () =>
        new MergeTreeCompactManager(new Levels([], 4, compare), universal, slow, {
          minFileSize: 1_000_000,
          numSortedRunStopTrigger: 4,
          compare,
        }),
      fullCompactionDeltaCommits: null,
      deleteFiles: async () => undefined,
    });
    for (let i = 1; i <= 3; i++) await w.onFlush([file(0, 10, i)]);
    expect(started).toBe(1); // the compaction runs in the background; the writer goes on
    await w.onFlush([file(0, 10, 4)]);
    await w.onFlush([file(0, 10, 5)]); // the bucket had 4 runs before this flush: no wait yet
    let done = false;
    const fifth = w.onFlush([file(0, 10, 6)]).then(() => (done = true)); // it had 5 > 4: waits
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    release();
    await fifth;
    expect(done).toBe(true);
    const inc = await w.prepareCommit();
    expect(inc.compactBefore.length).toBeGreaterThanOrEqual(3);
  });
});
