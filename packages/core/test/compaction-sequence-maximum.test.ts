/**
 * A compaction that drops the record holding its bucket's highest sequence number (a retraction
 * dropped on the way to the top level, a record a deletion vector marked) must not lower the
 * number the bucket's next writer continues from: that writer restores its counter from the live
 * files, and a committer that saw the dropped number committed would re-sequence the new file and
 * drop the compaction that came with it (a file rewrite plus a compaction redone).
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import type { CommitResult } from '../src/commit/file-store-commit.js';
import { FileSystemCatalog, openTable, type Table } from '../src/index.js';

let n = 0;
async function pkTable(options: Record<string, string>): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://compaction-seq-max-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function liveMaximum(table: Table): Promise<bigint> {
  let max = -1n;
  for (const f of (await table.newRead().plan()).files()) if (f.maxSequenceNumber > max) max = f.maxSequenceNumber;
  return max;
}

async function rows(table: Table): Promise<string[]> {
  return (await table.newRead().toArrowTable())
    .toArray()
    .map((r) => JSON.stringify(r.toJSON()))
    .sort();
}

/**
 * One long-lived committer (as a sink's) and a fresh writer per checkpoint (as the sink opens
 * after a dropped compaction, or after a restart): the writer continues from the live files.
 */
function pipeline(table: Table) {
  const commit = table.newCommit({ commitUser: 'pipeline' });
  let id = 0n;
  return async (rowsIn: Array<Record<string, unknown>>): Promise<Extract<CommitResult, { status: 'committed' }>> => {
    const w = table.newBatchWrite({ rowKindField: 'kind' });
    await w.write(rowsIn.map((r) => ({ kind: '+I', ...r })));
    const messages = await w.prepareCommit();
    await w.close();
    const result = await commit.commit({ identifier: ++id, messages });
    if (result.status !== 'committed') throw new Error(`checkpoint ${id}: ${result.status}`);
    return result;
  };
}

// The live maximum after the dropping compaction, before the fix: a full compaction drops key 3
// altogether (its row, number 2, and its retraction, 3); with deletion vectors the row stays in its
// file, marked deleted, and only the retraction goes.
const cases: Array<[string, Record<string, string>, bigint]> = [
  ['a retraction dropped by a full compaction to the top level', { 'full-compaction.delta-commits': '1' }, 1n],
  ['deletion vectors (level 0 compacted at every commit)', { 'deletion-vectors.enabled': 'true' }, 2n],
];

describe('a compaction that drops the bucket maximum', () => {
  it.each(cases)('%s: today the next writer reuses the dropped number and its commit re-sequences', async (_name, options, lowered) => {
    const table = await pkTable(options);
    const checkpoint = pipeline(table);
    await checkpoint([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    // Sequence number 3: a retraction of key 3, the highest number of the bucket. The commit's
    // compaction drops it (and, with deletion vectors, marks the row of key 3 it replaced).
    const dropping = await checkpoint([{ k: 3, kind: '-D' }]);
    expect(dropping.snapshotIds).toHaveLength(2);
    expect((await table.snapshotManager.snapshot(dropping.snapshotIds[1]!)).commitKind).toBe('COMPACT');
    expect((await table.newRead().plan()).files().every((f) => f.level > 0)).toBe(true);
    // Today: the compaction's output covers sequence numbers 0..2 only.
    expect(await liveMaximum(table)).toBe(lowered);

    const next = await checkpoint([{ k: 4, v: 'd' }]);
    // Today: the fresh writer numbered key 4 with 3, a number already committed (the retraction),
    // so the commit rewrote its file above it and dropped the compaction that came with it.
    expect(next.resequencedFiles).toBe(1);
    expect(next.compactionDropped).toMatch(/bucket 0 was dropped: .*re-sequenced/);
    // Until the pipeline compacts the bucket again, a deletion-vector table's batch reads skip the
    // level-0 file that the dropped compaction would have taken up.
    expect(await rows(table)).toEqual([
      '{"k":1,"v":"a"}',
      '{"k":2,"v":"b"}',
      ...(options['deletion-vectors.enabled'] ? [] : ['{"k":4,"v":"d"}']),
    ]);
  });
});
