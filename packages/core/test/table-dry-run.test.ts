/**
 * Dry runs of `Table.delete`, `Table.update` and `Table.overwrite` in the library: they return the
 * plan and write nothing (every object of the table stays as it was), and the real call reports
 * the same plan. The CLI's `--dry-run` is tested on disk and S3 in test/cli-dry-run.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, PredicateError, type Table } from '../src/index.js';

let n = 0;
async function table(options: { primaryKey: boolean }): Promise<{ t: Table; io: MemoryFileIO }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://dry-run-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'p', type: 'STRING NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    partitionKeys: ['p'],
    ...(options.primaryKey ? { primaryKeys: ['k', 'p'], options: { bucket: '1' } } : { options: { 'deletion-vectors.enabled': 'true' } }),
  });
  const t = await openTable(catalog.tableLocation('db.t'), { fileIO: io });
  await t.append([
    { k: 1, p: 'a', v: 'x' },
    { k: 2, p: 'a', v: 'y' },
    { k: 3, p: 'b', v: 'x' },
  ]);
  return { t, io };
}

/** Every object under the table with its bytes, as text. */
async function objects(io: MemoryFileIO, location: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const st of io.list(location)) out.set(st.path, Buffer.from(await io.read(st.path)).toString('base64'));
  return out;
}

describe.each([
  { name: 'primary-key table', primaryKey: true, method: 'primary-key-records' },
  { name: 'append table with deletion vectors', primaryKey: false, method: 'deletion-vectors' },
])('$name', ({ primaryKey, method }) => {
  it('delete and update with dryRun return the plan and write nothing; the real calls report the same plan', async () => {
    const { t, io } = await table({ primaryKey });
    const before = await objects(io, t.location);
    const dry = await t.delete({ where: "v = 'x'" }, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, plan: { baseSnapshotId: 1, rowsMatched: 2, method } });
    expect(dry.plan.partitions).toEqual([
      { partition: { p: 'a' }, rows: 1 },
      { partition: { p: 'b' }, rows: 1 },
    ]);
    expect(dry.plan.deletionVectorFiles).toHaveLength(primaryKey ? 0 : 2);
    const dryUpdate = await t.update({ where: "p = 'a'", set: { v: 'z' } }, { dryRun: true });
    expect(dryUpdate.plan).toMatchObject({ rowsMatched: 2, partitions: [{ partition: { p: 'a' }, rows: 2 }] });
    expect(await objects(io, t.location)).toEqual(before);

    const real = await t.delete({ where: "v = 'x'" });
    expect(real).toMatchObject({ deleted: 2, dryRun: false, result: { status: 'committed', snapshotId: 2 } });
    expect(real.plan).toEqual(dry.plan);
    expect((await t.newRead().toArrowTable()).numRows).toBe(1);
  });

  it('a bad predicate is refused before anything is planned', async () => {
    const { t, io } = await table({ primaryKey });
    const before = await objects(io, t.location);
    await expect(t.delete({ where: 'nope = 1' }, { dryRun: true })).rejects.toThrow(PredicateError);
    await expect(t.update({ where: 'nope = 1', set: { v: 'q' } }, { dryRun: true })).rejects.toThrow(/unknown column 'nope'/);
    expect(await objects(io, t.location)).toEqual(before);
  });

  it('overwrite with dryRun plans the partitions it replaces and writes nothing', async () => {
    const { t, io } = await table({ primaryKey });
    const before = await objects(io, t.location);
    const rows = [
      { k: 7, p: 'b', v: 'n' },
      { k: 8, p: 'c', v: 'n' },
    ];
    const plan = await t.overwrite(rows, { dryRun: true });
    expect(plan).toEqual({
      baseSnapshotId: 1,
      mode: 'dynamic',
      partitions: [
        { partition: { p: 'b' }, currentFiles: 1, currentRows: 1, rowsWritten: 1 },
        { partition: { p: 'c' }, currentFiles: 0, currentRows: 0, rowsWritten: 1 },
      ],
      filesReplaced: 1,
      rowsReplaced: 1,
      rowsWritten: 2,
    });
    expect(await t.overwrite(rows, { dryRun: true, dynamic: false })).toMatchObject({ mode: 'table', filesReplaced: 2, rowsReplaced: 3 });
    await expect(t.overwrite([{ k: 1, p: 'x', v: 'bad' }], { dryRun: true, partition: { p: 'a' } })).rejects.toThrow(
      /the input has rows that belong to partition 'p=x'/,
    );
    expect(await objects(io, t.location)).toEqual(before);
    expect((await t.overwrite(rows)).status).toBe('committed');
  });
});
