/**
 * A compaction that drops the record holding its bucket's highest sequence number (a retraction
 * dropped on the way to the top level, a record a deletion vector marked) must not lower the
 * number the bucket's next writer continues from: that writer restores its counter from the live
 * files, and a committer that saw the dropped number committed would re-sequence the new file and
 * drop the compaction that came with it (a file rewrite plus a compaction redone). The output
 * keeps its inputs' maximum; where no output is left to keep it (a deletion-vector level-0 file of
 * retractions only), the commit reads the bucket's live maximum before it re-sequences anything.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList, type DataFileMeta } from '@tidemark/format';
import type { CommitResult } from '../src/commit/file-store-commit.js';
import { FileSystemCatalog, openTable, type CommitMessage, type Table } from '../src/index.js';

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

/** The data files that the delta manifest list `list` adds. */
async function addedFiles(table: Table, list: string): Promise<DataFileMeta[]> {
  const io = table.fileIO;
  const out: DataFileMeta[] = [];
  for (const m of await readManifestList(io, table.paths.manifestPath(list))) {
    for await (const e of readManifestEntries(io, table.paths.manifestPath(m.fileName))) if (e.kind === 'ADD') out.push(e.file);
  }
  return out;
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
  const commitMessages = async (messages: CommitMessage[]): Promise<Extract<CommitResult, { status: 'committed' }>> => {
    const result = await commit.commit({ identifier: ++id, messages });
    if (result.status !== 'committed') throw new Error(`checkpoint ${id}: ${result.status}`);
    return result;
  };
  const checkpoint = async (rowsIn: Array<Record<string, unknown>>): Promise<Extract<CommitResult, { status: 'committed' }>> => {
    const w = table.newBatchWrite({ rowKindField: 'kind' });
    await w.write(rowsIn.map((r) => ({ kind: '+I', ...r })));
    const messages = await w.prepareCommit();
    await w.close();
    return commitMessages(messages);
  };
  return { checkpoint, commitMessages };
}

describe('a compaction that drops the bucket maximum', () => {
  it('keeps it as the output file maximum: the next writer continues above every number committed, no re-sequencing', async () => {
    const table = await pkTable({ 'full-compaction.delta-commits': '1' });
    const { checkpoint } = pipeline(table);
    await checkpoint([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    // Number 3: a retraction of key 3, the highest number of the bucket. The commit's full
    // compaction drops key 3 altogether (its row, number 2, and the retraction).
    const dropping = await checkpoint([{ k: 3, kind: '-D' }]);
    expect(dropping.snapshotIds).toHaveLength(2);
    expect((await table.snapshotManager.snapshot(dropping.snapshotIds[1]!)).commitKind).toBe('COMPACT');
    const compacted = (await table.newRead().plan()).files();
    expect(compacted.map((f) => [f.level, f.rowCount, f.minSequenceNumber, f.maxSequenceNumber])).toEqual([[5, 2, 0n, 3n]]);

    const next = await checkpoint([{ k: 4, v: 'd' }]);
    // The fresh writer continued at 4: its file was committed as written, with its compaction.
    expect(next.resequencedFiles).toBeUndefined();
    expect(next.compactionDropped).toBeUndefined();
    expect(next.snapshotIds).toHaveLength(2);
    const appended = (await table.snapshotManager.snapshot(next.snapshotIds[0]!)).deltaManifestList;
    const added = await addedFiles(table, appended);
    expect(added.map((f) => [f.minSequenceNumber, f.maxSequenceNumber])).toEqual([[4n, 4n]]);
    expect(await liveMaximum(table)).toBe(4n);
    expect(await rows(table)).toEqual(['{"k":1,"v":"a"}', '{"k":2,"v":"b"}', '{"k":4,"v":"d"}']);
  });

  it('deletion vectors, a checkpoint of retractions only: no file keeps the maximum, and the commit reads the live one instead of re-sequencing', async () => {
    const table = await pkTable({ 'deletion-vectors.enabled': 'true' });
    const { checkpoint } = pipeline(table);
    await checkpoint([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    // The retraction (number 3) marks key 3's row in the level-5 file; its level-0 file, holding
    // nothing else, compacts to nothing.
    const dropping = await checkpoint([{ k: 3, kind: '-D' }]);
    expect(dropping.snapshotIds).toHaveLength(2);
    expect((await table.newRead().plan()).files().map((f) => [f.level, f.maxSequenceNumber])).toEqual([[5, 2n]]);

    // The fresh writer reuses 3, as Java's writer does after such a compaction (the Java-written
    // pk-dv fixture: bucket 1 continues at 5 after its retraction 5 was compacted away). No live
    // record holds 3 or more, so the later snapshot still wins without a rewrite.
    const next = await checkpoint([
      { k: 4, v: 'd' },
      { k: 2, v: 'B' },
    ]);
    expect(next.resequencedFiles).toBeUndefined();
    expect(next.compactionDropped).toBeUndefined();
    const added = await addedFiles(table, (await table.snapshotManager.snapshot(next.snapshotIds[0]!)).deltaManifestList);
    expect(added.map((f) => [f.minSequenceNumber, f.maxSequenceNumber])).toEqual([[3n, 4n]]);
    // Level 0 was compacted in the same commit, so batch reads (which skip level 0) see both rows.
    expect((await table.newRead().plan()).files().every((f) => f.level > 0)).toBe(true);
    expect(await rows(table)).toEqual(['{"k":1,"v":"a"}', '{"k":2,"v":"B"}', '{"k":4,"v":"d"}']);
  });

  it('a writer that really overlaps a live maximum is still re-sequenced after the live read', async () => {
    const table = await pkTable({ 'deletion-vectors.enabled': 'true' });
    const { checkpoint, commitMessages } = pipeline(table);
    await checkpoint([
      { k: 1, v: 'a' },
      { k: 2, v: 'b' },
      { k: 3, v: 'c' },
    ]);
    await checkpoint([{ k: 3, kind: '-D' }]);
    // Two writers continue from the same live files (maximum 2); another process commits first.
    const stale = table.newBatchWrite();
    await stale.write([{ k: 1, v: 'stale' }]);
    const staleMessages = await stale.prepareCommit();
    await stale.close();
    await table.append([{ k: 1, v: 'other' }]);
    // The pipeline's committer knew its bucket maximum uncertain (3 was dropped): it reads the
    // live maximum, now the other process's 3, and still re-sequences above it.
    const late = await commitMessages(staleMessages);
    expect(late.resequencedFiles).toBe(1);
    expect(late.compactionDropped).toMatch(/re-sequenced/);
    // The pipeline compacts level 0 at its next checkpoint; the later commit's record wins.
    await checkpoint([{ k: 5, v: 'e' }]);
    expect(await rows(table)).toEqual(['{"k":1,"v":"stale"}', '{"k":2,"v":"b"}', '{"k":5,"v":"e"}']);
  });
});
