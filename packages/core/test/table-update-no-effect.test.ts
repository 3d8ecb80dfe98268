/**
 * `Table.update` refuses an assignment the merge engine would ignore, naming the column and the
 * reason, instead of reporting rows as updated while nothing changes: a null on a partial-update
 * table, a lower or null `sequence.field` value, a sequence group whose sequence field would be
 * lower or null. What the engine does take still works.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, WriteValidationError, type Table } from '../src/index.js';

let n = 0;
async function table(options: Record<string, string>): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://update-effect-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 's', type: 'BIGINT' },
      { name: 'w', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '1', ...options },
  });
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function rows(t: Table): Promise<unknown[]> {
  const out = (await t.newRead().toArrowTable()).toArray().map((r) => ({ ...r.toJSON() }));
  return out.sort((a, b) => (a.k as number) - (b.k as number));
}

/** Expects `update` to be refused with `message`, the dry run too, and the table to keep its snapshot and rows. */
async function refused(t: Table, change: { where: string; set: Record<string, unknown> }, message: RegExp): Promise<void> {
  const latest = await t.snapshotManager.latestId();
  const before = await rows(t);
  await expect(t.update(change)).rejects.toThrow(WriteValidationError);
  await expect(t.update(change)).rejects.toThrow(message);
  await expect(t.update(change, { dryRun: true })).rejects.toThrow(message);
  expect(await t.snapshotManager.latestId()).toBe(latest);
  expect(await rows(t)).toEqual(before);
}

describe('update refuses what the merge engine would ignore', () => {
  it('partial-update: a null never overwrites, so setting a column to null is refused; values still update', async () => {
    const t = await table({ 'merge-engine': 'partial-update' });
    await t.append([
      { k: 1, v: 'a', s: 1n, w: 'x' },
      { k: 2, v: 'b', s: 2n, w: 'y' },
    ]);
    await refused(t, { where: 'k = 1', set: { v: null } }, /column 'v'.*partial-update never overwrites a value with null/);
    await refused(t, { where: 'k >= 1', set: { w: 'z', v: null } }, /column 'v'.*partial-update/);
    const r = await t.update({ where: 'k = 2', set: { v: 'B' } });
    expect(r.updated).toBe(1);
    expect(await rows(t)).toEqual([
      { k: 1, v: 'a', s: 1n, w: 'x' },
      { k: 2, v: 'B', s: 2n, w: 'y' },
    ]);
  });

  it('sequence.field: a lower or null new sequence value is refused, naming the row; equal and higher work', async () => {
    const t = await table({ 'sequence.field': 's' });
    await t.append([
      { k: 1, v: 'a', s: 5n, w: 'x' },
      { k: 2, v: 'b', s: 9n, w: 'y' },
    ]);
    await refused(
      t,
      { where: 'k = 1', set: { s: 4 } },
      /column 's': in the row with k=1, the new value 4 is lower than the current 5 and with sequence\.field 's' .*would change nothing/,
    );
    await refused(t, { where: 'k >= 1', set: { s: 7 } }, /column 's': in the row with k=2, the new value 7 is lower than the current 9/);
    await refused(
      t,
      { where: 'k = 1', set: { s: null, v: 'q' } },
      /column 's': in the row with k=1, the new value null sorts before the current 5 .*sequence\.field 's'/,
    );
    expect((await t.update({ where: 'k = 1', set: { v: 'same-sequence' } })).updated).toBe(1);
    expect((await t.update({ where: 'k = 2', set: { s: 10, v: 'higher' } })).updated).toBe(1);
    expect(await rows(t)).toEqual([
      { k: 1, v: 'same-sequence', s: 5n, w: 'x' },
      { k: 2, v: 'higher', s: 10n, w: 'y' },
    ]);
  });

  it('sequence.field with descending order: a higher new value is the older one', async () => {
    const t = await table({ 'sequence.field': 's', 'sequence.field.sort-order': 'descending' });
    await t.append([{ k: 1, v: 'a', s: 5n, w: 'x' }]);
    await refused(
      t,
      { where: 'k = 1', set: { s: 6 } },
      /column 's': in the row with k=1, the new value 6 is higher than the current 5 and with sequence\.field 's' sorted descending/,
    );
    expect((await t.update({ where: 'k = 1', set: { s: 3, v: 'b' } })).updated).toBe(1);
    expect(await rows(t)).toEqual([{ k: 1, v: 'b', s: 3n, w: 'x' }]);
  });

  it('partial-update with a sequence group: nulls overwrite inside the group; a lower or null group sequence is refused', async () => {
    const t = await table({ 'merge-engine': 'partial-update', 'fields.s.sequence-group': 'w' });
    await t.append([
      { k: 1, v: 'a', s: 5n, w: 'x' },
      { k: 2, v: 'b', s: null, w: null },
    ]);
    // Inside the group a record not older than the row sets every group column, nulls included.
    expect((await t.update({ where: 'k = 1', set: { w: null } })).updated).toBe(1);
    expect(await rows(t)).toEqual([
      { k: 1, v: 'a', s: 5n, w: null },
      { k: 2, v: 'b', s: null, w: null },
    ]);
    await refused(
      t,
      { where: 'k = 1', set: { s: 2, w: 'old' } },
      /column 's': in the row with k=1, the new value 2 of sequence field 's' is lower than the current 5 .*sequence group of 'w'/,
    );
    await refused(
      t,
      { where: 'k = 1', set: { s: null } },
      /column 's': in the row with k=1, sequence field 's' would be null .*sequence group of 'w'/,
    );
    // Row 2 has no group sequence: a record without one never updates the group.
    await refused(
      t,
      { where: 'k = 2', set: { w: 'new' } },
      /column 'w': in the row with k=2, sequence field 's' is null .*sequence group of 'w' \(set 's' too\)/,
    );
    expect((await t.update({ where: 'k = 2', set: { w: 'new', s: 1 } })).updated).toBe(1);
    expect(await rows(t)).toEqual([
      { k: 1, v: 'a', s: 5n, w: null },
      { k: 2, v: 'b', s: 1n, w: 'new' },
    ]);
  });
});
