/**
 * `Table.update({ where, set })` on primary-key tables (read, set, upsert in one snapshot) and its
 * refusals; append tables with deletion vectors are model-checked in
 * test/deletion-vectors-append.test.ts on disk and S3.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, NotSupportedError, openTable, WriteValidationError, type Table, type TableSpec } from '../src/index.js';

let n = 0;
async function table(spec: Partial<TableSpec> & { options?: Record<string, string> }): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://update-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'n', type: 'BIGINT NOT NULL' },
    ],
    primaryKeys: ['k'],
    ...spec,
    options: { bucket: '2', ...spec.options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function rows(t: Table, snapshotId?: number): Promise<unknown[]> {
  const out = (await t.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable()).toArray().map((r) => ({ ...r.toJSON() }));
  return out.sort((a, b) => (a.k as number) - (b.k as number));
}

describe('Table.update on primary-key tables', () => {
  it('sets the columns of the matching rows in one snapshot and leaves the others', async () => {
    const t = await table({});
    await t.append([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'b', n: 2n },
      { k: 3, v: 'c', n: 3n },
    ]);
    const { updated, result } = await t.update({ where: 'n >= 2', set: { v: 'z', n: 9 } });
    expect(updated).toBe(2);
    expect(result.status).toBe('committed');
    expect(await rows(t)).toEqual([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'z', n: 9n },
      { k: 3, v: 'z', n: 9n },
    ]);
    // The snapshot before still reads the old values.
    expect(await rows(t, 1)).toEqual([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'b', n: 2n },
      { k: 3, v: 'c', n: 3n },
    ]);
    const none = await t.update({ where: 'k > 100', set: { v: 'x' } });
    expect(none).toEqual({
      updated: 0,
      result: { status: 'empty' },
      plan: { baseSnapshotId: 2, rowsMatched: 0, method: 'primary-key-records', partitions: [], deletionVectorFiles: [] },
      dryRun: false,
    });
    expect(await t.snapshotManager.latestId()).toBe(result.status === 'committed' ? result.snapshotId : -1);
  });

  it('works with partial-update (whole rows are written) and sets NULL in a nullable column', async () => {
    const t = await table({ options: { 'merge-engine': 'partial-update' } });
    await t.append([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'b', n: 2n },
    ]);
    await t.update({ where: 'k = 2', set: { n: 7 } });
    expect(await rows(t)).toEqual([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'b', n: 7n },
    ]);
  });

  it('refuses what it cannot do, naming the column or option, and commits nothing', async () => {
    const t = await table({});
    await t.append([{ k: 1, v: 'a', n: 1n }]);
    await expect(t.update({ where: 'k = 1', set: { k: 2 } })).rejects.toThrow(/column 'k'.*primary key/);
    await expect(t.update({ where: 'k = 1', set: { nope: 1 } })).rejects.toThrow(WriteValidationError);
    await expect(t.update({ where: 'k = 1', set: { nope: 1 } })).rejects.toThrow(/column 'nope'.*no such column/);
    await expect(t.update({ where: 'k = 1', set: { n: 'many' } })).rejects.toThrow(/column 'n'/);
    await expect(t.update({ where: 'k = 1', set: { n: null } })).rejects.toThrow(/column 'n'.*NOT NULL/);
    await expect(t.update({ where: 'k = 1', set: {} })).rejects.toThrow(/at least one column/);
    await expect(t.update({ where: 'no_such = 1', set: { v: 'x' } })).rejects.toThrow(/no_such/);
    expect(await t.snapshotManager.latestId()).toBe(1);

    const agg = await table({ options: { 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'sum' } });
    await expect(agg.update({ where: 'k = 1', set: { v: 'x' } })).rejects.toThrow(NotSupportedError);
    const first = await table({ options: { 'merge-engine': 'first-row' } });
    await expect(first.update({ where: 'k = 1', set: { v: 'x' } })).rejects.toThrow(/first-row/);
  });
});
