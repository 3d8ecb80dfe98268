/**
 * A full compaction rewrites every data file that has a deletion vector, even a single file of a
 * partition (and, on append tables, a large one): its deleted rows are purged and the vector
 * dropped, as Java's full compaction does (`pickFullCompaction` takes the top-level files with a
 * vector; the append full-compaction task always compacts files with one). Rows read the same
 * before and after.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { INDEX_TYPE_DELETION_VECTORS } from '@tidemark/format';
import { alterTable, FileSystemCatalog, openTable, SchemaChanges, snapshotIndexEntries, type Table } from '@tidemark/core';
import { compactAppendTable, compactPrimaryKeyTable } from '../src/index.js';

let n = 0;
async function table(primaryKeys: string[], options: Record<string, string>): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://full-dv-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT NOT NULL' },
      { name: 'day', type: 'STRING NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    partitionKeys: ['day'],
    primaryKeys,
    options: { 'deletion-vectors.enabled': 'true', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

const rowsOf = (day: string, count: number): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, i) => ({ id: i, day, v: `v${i}` }));

async function ids(t: Table): Promise<number[]> {
  return (await t.newRead().toArrowTable())
    .toArray()
    .map((r) => r.id as number)
    .sort((a, b) => a - b);
}

/** Data files with a deletion vector in the latest snapshot. */
async function filesWithVectors(t: Table): Promise<number> {
  const latest = await t.snapshotManager.latest();
  const entries = await snapshotIndexEntries(t.fileIO, t.paths, latest);
  return entries.filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS).reduce((s, e) => s + (e.dvRanges?.length ?? 0), 0);
}

describe('full compaction purges rows deleted by vector', () => {
  it('append table: the one file of a partition with 200 rows deleted by vector is planned and rewritten', async () => {
    const t = await table([], { bucket: '-1' });
    await t.append([...rowsOf('2024-05-01', 1000), ...rowsOf('2024-05-02', 10)]);
    await t.delete({ where: "day = '2024-05-01' AND id < 200" });
    expect(await filesWithVectors(t)).toBe(1);
    const before = await ids(t);

    const dry = await compactAppendTable(t, { full: true, partition: { day: '2024-05-01' }, dryRun: true });
    expect(dry).toMatchObject({ filesBefore: 1, windows: 1, rows: 800 });
    expect(dry.plan).toEqual([expect.objectContaining({ partition: { day: '2024-05-01' }, rows: 800 })]);
    // Without --full a lone file is not worth a rewrite.
    expect(await compactAppendTable(t, { partition: { day: '2024-05-01' }, dryRun: true })).toMatchObject({ filesBefore: 0 });

    const done = await compactAppendTable(t, { full: true, partition: { day: '2024-05-01' } });
    expect(done).toMatchObject({ filesBefore: 1, filesAfter: 1, rows: 800 });
    expect(await filesWithVectors(t)).toBe(0);
    expect(await ids(t)).toEqual(before);
    // Nothing is left to purge: a second full run plans nothing.
    expect(await compactAppendTable(t, { full: true, dryRun: true })).toMatchObject({ filesBefore: 0 });
  });

  it('append table: a large file with a vector is rewritten too', async () => {
    const written = await table([], { bucket: '-1' });
    await written.append(rowsOf('2024-05-01', 500));
    await written.delete({ where: 'id >= 100' });
    // The file is now far above the compaction's small-file threshold.
    await alterTable(written.fileIO, written.paths, [SchemaChanges.setOption('target-file-size', '1 kb')]);
    const t = await openTable(written.location, { fileIO: written.fileIO });
    expect((await t.newRead().plan()).splits.flatMap((s) => s.files)).toEqual([
      expect.objectContaining({ meta: expect.objectContaining({ fileSize: expect.any(Number) }) }),
    ]);
    expect((await t.newRead().plan()).splits[0]!.files[0]!.meta.fileSize).toBeGreaterThan(1024);
    const dry = await compactAppendTable(t, { full: true, dryRun: true });
    expect(dry).toMatchObject({ filesBefore: 1, rows: 100 });
  });

  it('primary-key table: the one top-level file of a bucket with rows deleted by vector is planned and rewritten', async () => {
    const t = await table(['id', 'day'], { bucket: '1' });
    await t.append(rowsOf('2024-05-01', 300));
    await compactPrimaryKeyTable(t, { full: true }); // every file on the top level
    await t.delete(rowsOf('2024-05-01', 200).map(({ id, day }) => ({ id, day })));
    expect(await filesWithVectors(t)).toBe(1);
    const before = await ids(t);
    expect(before).toHaveLength(100);

    const dry = await compactPrimaryKeyTable(t, { full: true, partition: { day: '2024-05-01' }, dryRun: true });
    expect(dry).toMatchObject({ filesBefore: 1, windows: 1 });
    const done = await compactPrimaryKeyTable(t, { full: true, partition: { day: '2024-05-01' } });
    expect(done).toMatchObject({ filesBefore: 1, filesAfter: 1, filesUpgraded: 0 });
    expect(await filesWithVectors(t)).toBe(0);
    expect(await ids(t)).toEqual(before);
    expect(await compactPrimaryKeyTable(t, { full: true, dryRun: true })).toMatchObject({ filesBefore: 0 });
  });

  it('primary-key table: a large top-level file with a vector that overlaps nothing is rewritten, not left as it is', async () => {
    const written = await table(['id', 'day'], { bucket: '1' });
    await written.append(rowsOf('2024-05-01', 300));
    await compactPrimaryKeyTable(written, { full: true });
    await written.delete(rowsOf('2024-05-01', 200).map(({ id, day }) => ({ id, day })));
    // Large files from now on, and new writes stay on level 0: the full compaction has two runs.
    const changes = [SchemaChanges.setOption('target-file-size', '1 kb'), SchemaChanges.setOption('write-only', 'true')];
    await alterTable(written.fileIO, written.paths, changes);
    const t = await openTable(written.location, { fileIO: written.fileIO });
    await t.append([{ id: 5000, day: '2024-05-01', v: 'new' }]);
    const levels = (await t.newRead().plan()).splits[0]!.files.map((f) => f.meta.level).sort();
    expect(levels).toEqual([0, 5]);
    const expected = [...(await ids(t)), 5000]; // the level-0 row is not visible to batch reads yet
    expect(await filesWithVectors(t)).toBe(1);
    const done = await compactPrimaryKeyTable(t, { full: true });
    expect(done.filesBefore).toBe(2);
    expect(await filesWithVectors(t)).toBe(0);
    expect(await ids(t)).toEqual(expected);
  });
});
