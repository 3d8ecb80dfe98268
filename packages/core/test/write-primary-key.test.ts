import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { bucketOfValues, deserializeBinaryRow, type DataType } from '@tidemark/format';
import {
  FileSystemCatalog,
  NotSupportedError,
  openTable,
  readDataFile,
  WriteValidationError,
  type Table,
  type TableSpec,
} from '../src/index.js';

let n = 0;
async function pkTable(spec: Partial<TableSpec> & { options?: Record<string, string> }): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://pk-write-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'n', type: 'BIGINT' },
    ],
    primaryKeys: ['k'],
    ...spec,
    options: { bucket: '2', ...spec.options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function rows(table: Table, snapshotId?: number): Promise<unknown[]> {
  const t = await table.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  const out = t.toArray().map((r) => ({ ...r.toJSON() }));
  return out.sort((a, b) => (a.k as number) - (b.k as number));
}

describe('primary-key writes', () => {
  it('append upserts, later snapshots win, and files carry Java-style key-value metadata', async () => {
    const t = await pkTable({});
    await t.append([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'b', n: 2n },
      { k: 1, v: 'a2', n: 3n },
    ]);
    await t.append([
      { k: 2, v: 'b2', n: null },
      { k: 3, v: 'c', n: 5n },
    ]);
    expect(await rows(t)).toEqual([
      { k: 1, v: 'a2', n: 3n },
      { k: 2, v: 'b2', n: null },
      { k: 3, v: 'c', n: 5n },
    ]);
    expect(await rows(t, 1)).toEqual([
      { k: 1, v: 'a2', n: 3n },
      { k: 2, v: 'b', n: 2n },
    ]);
    const files = await t.newRead().plan();
    const INT: DataType = { root: 'INT', nullable: false };
    for (const split of files.splits) {
      // Every key sits in the bucket Java's hash gives it.
      for (const f of split.files) {
        const [lo] = deserializeBinaryRow(f.meta.minKey, [INT]);
        expect(split.bucket).toBe(bucketOfValues([INT], [lo as number], 2));
        expect(f.meta.level).toBe(0);
        expect(f.meta.fileSource).toBe(0);
      }
    }
    // Sequence numbers continue per bucket across commits.
    const bySplit = files.splits.map((s) => s.files.map((f) => [f.meta.minSequenceNumber, f.meta.maxSequenceNumber]));
    for (const ranges of bySplit) {
      const sorted = [...ranges].sort((a, b) => Number(a[0]! - b[0]!));
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]![0]).toBeGreaterThan(sorted[i - 1]![1]!);
    }
  });

  it('merges same-key rows in the write buffer: one record per key and sequence order kept', async () => {
    const t = await pkTable({ options: { bucket: '1' } });
    await t.append([
      { k: 1, v: 'x', n: 1n },
      { k: 1, v: 'y', n: 2n },
      { k: 1, v: 'z', n: 3n },
    ]);
    const plan = await t.newRead().plan();
    const f = plan.splits[0]!.files;
    expect(f).toHaveLength(1);
    expect(f[0]!.meta.rowCount).toBe(1);
    expect(f[0]!.meta.minSequenceNumber).toBe(2n);
    expect(await rows(t)).toEqual([{ k: 1, v: 'z', n: 3n }]);
  });

  it('orders by sequence.field (descending: the smallest value wins, nulls stay oldest), across commits and in the buffer', async () => {
    const fields = [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'n', type: 'BIGINT' },
    ];
    const asc = await pkTable({ fields, options: { 'sequence.field': 'n' } });
    await asc.append([
      { k: 1, v: 'newest', n: 9n },
      { k: 1, v: 'older', n: 3n },
      { k: 2, v: 'x', n: 1n },
    ]);
    await asc.append([
      { k: 1, v: 'late', n: 5n },
      { k: 2, v: 'null seq', n: null },
    ]);
    expect(await rows(asc)).toEqual([
      { k: 1, v: 'newest', n: 9n },
      { k: 2, v: 'x', n: 1n },
    ]);
    const desc = await pkTable({ fields, options: { 'sequence.field': 'n', 'sequence.field.sort-order': 'descending' } });
    await desc.append([
      { k: 1, v: 'a', n: 9n },
      { k: 1, v: 'smallest', n: 3n },
      { k: 2, v: 'x', n: 1n },
    ]);
    await desc.append([
      { k: 1, v: 'late', n: 5n },
      { k: 2, v: 'null seq', n: null },
    ]);
    expect(await rows(desc)).toEqual([
      { k: 1, v: 'smallest', n: 3n },
      { k: 2, v: 'x', n: 1n },
    ]);
  });

  it('partial-update sequence groups apply on write and on read, also when the read projects the group away', async () => {
    const t = await pkTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'a', type: 'STRING' },
        { name: 'g', type: 'BIGINT' },
        { name: 'b', type: 'STRING' },
      ],
      options: { 'merge-engine': 'partial-update', 'fields.g.sequence-group': 'a' },
    });
    await t.append([{ k: 1, a: 'new', g: 5n, b: 'b1' }]);
    await t.append([
      { k: 1, a: 'stale', g: 2n, b: null },
      { k: 2, a: 'x', g: 1n, b: null },
    ]);
    await t.append([{ k: 2, a: null, g: null, b: 'only b' }]);
    expect(await rows(t)).toEqual([
      { k: 1, a: 'new', g: 5n, b: 'b1' },
      { k: 2, a: 'x', g: 1n, b: 'only b' },
    ]);
    const projected = await t.newRead({ columns: ['k', 'a'] }).toArrowTable();
    expect(projected.toArray().map((r) => ({ ...r.toJSON() }))).toEqual([
      { k: 1, a: 'new' },
      { k: 2, a: 'x' },
    ]);
  });

  it('takes row kinds from a field (objects and Arrow) and deletes by key or predicate', async () => {
    const t = await pkTable({});
    await t.append([
      { k: 1, v: 'a', n: 1n },
      { k: 2, v: 'b', n: 2n },
      { k: 3, v: 'c', n: 3n },
      { k: 4, v: 'd', n: 4n },
    ]);
    await t.append(
      [
        { op: '-D', k: 1, v: 'a', n: 1n },
        { op: '-U', k: 2, v: 'b', n: 2n },
        { op: '+U', k: 2, v: 'B', n: 20n },
        { k: 5, v: 'e', n: 5n },
      ],
      { rowKindField: 'op' },
    );
    expect(await rows(t)).toEqual([
      { k: 2, v: 'B', n: 20n },
      { k: 3, v: 'c', n: 3n },
      { k: 4, v: 'd', n: 4n },
      { k: 5, v: 'e', n: 5n },
    ]);
    const arrowInput = new arrow.Table({
      k: arrow.vectorFromArray([3], new arrow.Int32()),
      v: arrow.vectorFromArray(['c'], new arrow.Utf8()),
      n: arrow.vectorFromArray([3n], new arrow.Int64()),
      op: arrow.vectorFromArray(['-D'], new arrow.Utf8()),
    });
    await t.append(arrowInput, { rowKindField: 'op' });
    expect((await rows(t)).map((r) => (r as { k: number }).k)).toEqual([2, 4, 5]);
    const byKey = await t.delete([{ k: 4 }, { k: 99 }]);
    expect(byKey.deleted).toBe(1);
    expect(byKey.result.status).toBe('committed');
    const byWhere = await t.delete({ where: 'k >= 5' });
    expect(byWhere.deleted).toBe(1);
    expect(await rows(t)).toEqual([{ k: 2, v: 'B', n: 20n }]);
    // The -D records carry the deleted rows' values, as Java's DELETE writes them.
    const deletes: unknown[] = [];
    for (const split of (await t.newRead().plan()).splits) {
      for (const f of split.files) {
        if (f.meta.deleteRowCount === 0) continue;
        for await (const b of readDataFile(t.fileIO, { path: f.path, schema: t.schema() }, t.schema().fields, { keyValue: true })) {
          for (let i = 0; i < b.batch.numRows; i++) if (b.valueKind![i] === 3) deletes.push(b.batch.get(i)!.toJSON());
        }
      }
    }
    expect(deletes.map((d) => ({ ...(d as object) })).sort((a, b) => (a as { k: number }).k - (b as { k: number }).k)).toEqual([
      { k: 1, v: 'a', n: 1n },
      { k: 3, v: 'c', n: 3n },
      { k: 4, v: 'd', n: 4n },
      { k: 5, v: 'e', n: 5n },
    ]);
  });

  it('rejects bad row kinds, unknown engines for delete and deletes on append tables', async () => {
    const t = await pkTable({});
    await expect(t.append([{ k: 1, op: 'X' }], { rowKindField: 'op' })).rejects.toThrow(WriteValidationError);
    await expect(t.append([{ k: 1, op: 'X' }], { rowKindField: 'op' })).rejects.toThrow(/column 'op', row 0: invalid row kind "X"/);
    await expect(t.delete([{ v: 'no key' }])).rejects.toThrow(/column 'k', row 0: missing primary-key column/);
    const fr = await pkTable({ options: { 'merge-engine': 'first-row' } });
    await expect(fr.delete([{ k: 1 }])).rejects.toThrow(NotSupportedError);
    await expect(fr.append([{ k: 1, op: '-D' }], { rowKindField: 'op' })).rejects.toThrow(/first-row cannot take -U\/-D rows/);
    const agg = await pkTable({ options: { 'merge-engine': 'aggregation', 'fields.n.aggregate-function': 'max' } });
    await expect(
      agg.append(
        [
          { k: 1, n: 1n, op: '+I' },
          { k: 1, n: 1n, op: '-U' },
        ],
        { rowKindField: 'op' },
      ),
    ).rejects.toThrow(/row 1: aggregate function 'max' of column 'n' cannot retract/);
    expect(await agg.snapshotManager.latestId()).toBeNull();
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://pk-write-append-${++n}/wh`, { fileIO: io });
    await catalog.createTable('db.a', { fields: [{ name: 'k', type: 'INT' }] });
    const append = await openTable(catalog.tableLocation('db.a'), { fileIO: io });
    await expect(append.delete([{ k: 1 }])).rejects.toThrow(NotSupportedError);
    expect(await t.snapshotManager.latestId()).toBeNull();
  });
});
