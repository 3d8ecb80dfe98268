import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, SchemaChanges, TablePaths, alterTable, openTable } from '../src/index.js';

/** Rows of an Arrow table as plain objects, sorted by `id`. */
function rows(t: {
  numRows: number;
  schema: { fields: Array<{ name: string }> };
  getChild(name: string): { get(i: number): unknown } | null;
}): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < t.numRows; i++) {
    const r: Record<string, unknown> = {};
    for (const f of t.schema.fields) r[f.name] = t.getChild(f.name)!.get(i);
    out.push(r);
  }
  return out.sort((a, b) => Number(a['id']) - Number(b['id']));
}

describe('schema evolution end to end: write, alter, write, read by field id', () => {
  it('old files read through renames, drops, re-added names, widened types and added columns', async () => {
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://schema-change-read-${process.pid}/wh`, { fileIO: io });
    await catalog.createTable('db.t', {
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'p', type: 'STRING' },
        { name: 'v', type: 'INT' },
        { name: 's', type: 'STRING' },
        { name: 'f', type: 'FLOAT' },
      ],
      partitionKeys: ['p'],
    });
    const location = catalog.tableLocation('db.t');
    const t0 = await openTable(location, { fileIO: io });
    await t0.append([
      { id: 1, p: 'a', v: 10, s: 'old-1', f: 1.5 },
      { id: 2, p: 'b', v: 20, s: 'old-2', f: null },
    ]);

    const s1 = await alterTable(io, new TablePaths(location), [
      SchemaChanges.renameColumn('v', 'w'),
      SchemaChanges.dropColumn('s'),
      // Same name as the dropped column, new field id: old 's' values must not come back.
      SchemaChanges.addColumn('s', 'STRING'),
      SchemaChanges.addColumn('x', 'BIGINT', { position: { kind: 'after', column: 'id' } }),
      SchemaChanges.alterType('id', 'BIGINT'),
      SchemaChanges.alterType('f', 'DOUBLE'),
    ]);
    expect(s1.id).toBe(1);

    const t1 = await openTable(location, { fileIO: io });
    expect(t1.schema().id).toBe(1);
    await t1.append([{ id: 3n, x: 30n, p: 'a', w: 33, s: 'new-3', f: 3.25 }]);

    const all = await t1.newRead().toArrowTable();
    expect(all.schema.fields.map((f) => f.name)).toEqual(['id', 'x', 'p', 'w', 'f', 's']);
    expect(rows(all)).toEqual([
      { id: 1n, x: null, p: 'a', w: 10, f: 1.5, s: null },
      { id: 2n, x: null, p: 'b', w: 20, f: null, s: null },
      { id: 3n, x: 30n, p: 'a', w: 33, f: 3.25, s: 'new-3' },
    ]);

    // Filters on a renamed column use its stats from the old file through the field id.
    const filtered = await t1.newRead({ where: 'w >= 20' }).toArrowTable();
    expect(rows(filtered).map((r) => r['id'])).toEqual([2n, 3n]);
  });
});

describe('which schema a read uses', () => {
  it('a latest read uses the latest schema at once; time travel uses the snapshot schema', async () => {
    const io = new MemoryFileIO();
    const catalog = new FileSystemCatalog(`memory://schema-choice-${process.pid}/wh`, { fileIO: io });
    await catalog.createTable('db.t', { fields: [{ name: 'id', type: 'INT' }] });
    const location = catalog.tableLocation('db.t');
    await (await openTable(location, { fileIO: io })).append([{ id: 1 }]);
    await alterTable(io, new TablePaths(location), [SchemaChanges.addColumn('note', 'STRING')]);

    const table = await openTable(location, { fileIO: io });
    // No snapshot was written with schema 1 yet, but the new column is already readable (as null).
    const latest = await table.newRead({ columns: ['id', 'note'] }).toArrowTable();
    expect(rows(latest)).toEqual([{ id: 1, note: null }]);
    // Time travel to snapshot 1 reads with schema 0, which has no 'note' column.
    const old = await table.newRead({ snapshotId: 1 }).toArrowTable();
    expect(old.schema.fields.map((f) => f.name)).toEqual(['id']);
    await expect(table.newRead({ snapshotId: 1, columns: ['note'] }).toArrowTable()).rejects.toThrow(/note/);
  });
});
