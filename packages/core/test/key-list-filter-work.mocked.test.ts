/**
 * The work a key-list read does on rows it already found: the rows a binary search of a
 * single-column key finds are the rows `id IN (…)` keeps, so the filter is not tested on them
 * again, neither before the merge nor after it (a filter on key and partition columns only is
 * applied before the merge, and merged rows keep their key). A filter on another column is still
 * tested on the merged rows.
 * Row tests are counted through the module that makes them.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';

const calls = vi.hoisted(() => ({ matchingRows: 0, searched: [] as number[] }));
vi.mock('../src/read/row-filter.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/read/row-filter.js')>();
  return {
    ...original,
    matchingRows: (...args: Parameters<typeof original.matchingRows>) => {
      calls.matchingRows++;
      return original.matchingRows(...args);
    },
    sortedKeyRows: (...args: Parameters<typeof original.sortedKeyRows>) => {
      calls.searched.push(args[3].length);
      return original.sortedKeyRows(...args);
    },
  };
});

const { FileSystemCatalog, openTable } = await import('../src/index.js');

let n = 0;
async function table(partitioned: boolean) {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://key-list-work-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'dt', type: 'STRING NOT NULL' },
      { name: 'id', type: 'BIGINT NOT NULL' },
      { name: 'v', type: 'INT' },
    ],
    primaryKeys: partitioned ? ['dt', 'id'] : ['id'],
    partitionKeys: partitioned ? ['dt'] : [],
    options: { bucket: '4' },
  });
  const t = await openTable(catalog.tableLocation('db.t'), { fileIO: io });
  // Two commits: a key's newer value must win the merge.
  await t.append(Array.from({ length: 4000 }, (_, i) => ({ dt: 'd1', id: BigInt(i), v: i })));
  await t.append(Array.from({ length: 2000 }, (_, i) => ({ dt: 'd1', id: BigInt(i * 2), v: -i * 2 })));
  return t;
}

const value = (i: number): number => (i % 2 === 0 && i < 4000 ? 0 - i || 0 : i);

describe('key-list reads test their filter once', () => {
  beforeEach(() => {
    calls.matchingRows = 0;
    calls.searched = [];
  });

  it('each bucket is searched for the keys that hash to it, not for the whole list', async () => {
    const t = await table(false);
    const keys = Array.from({ length: 400 }, (_, i) => i * 9 + 1);
    calls.searched = [];
    const got = await t.newRead({ where: `id IN (${keys.join(', ')})` }).toArrowTable();
    expect(got.numRows).toBe(keys.filter((k) => k < 4000).length);
    const ids = got.toArray().map((r) => Number((r.toJSON() as { id: bigint }).id));
    expect(new Set(ids)).toEqual(new Set(keys.filter((k) => k < 4000)));
    // 4 buckets: every search is for a part of the list.
    expect(calls.searched.length).toBeGreaterThan(0);
    for (const n of calls.searched) expect(n).toBeLessThan(keys.length / 2);
  });

  it('id IN (…): the found rows are the result, with no row test', async () => {
    const t = await table(false);
    const keys = [0, 1, 2, 999, 1000, 3998, 3999, 5000, 7001];
    calls.matchingRows = 0;
    const got = await t.newRead({ where: `id IN (${keys.join(', ')})` }).toArrowTable();
    const rows = got
      .toArray()
      .map((r) => r.toJSON() as { id: bigint; v: number })
      .map((r) => [Number(r.id), r.v])
      .sort((a, b) => a[0]! - b[0]!);
    expect(rows).toEqual(keys.filter((k) => k < 4000).map((k) => [k, value(k)]));
    expect(calls.matchingRows).toBe(0);
  });

  it('a filter on key and partition columns: applied before the merge, the merged rows are those of the model', async () => {
    const t = await table(true);
    const got = await t.newRead({ where: `dt = 'd1' AND id IN (4, 5, 6)` }).toArrowTable();
    const rows = got
      .toArray()
      .map((r) => r.toJSON() as { id: bigint; v: number })
      .map((r) => [Number(r.id), r.v])
      .sort((a, b) => a[0]! - b[0]!);
    expect(rows).toEqual([4, 5, 6].map((k) => [k, value(k)]));
    expect((await t.newRead({ where: `dt = 'd2' AND id IN (4, 5, 6)` }).toArrowTable()).numRows).toBe(0);
  });

  it('a filter on a value column is still tested on the merged rows', async () => {
    const t = await table(false);
    calls.matchingRows = 0;
    const got = await t.newRead({ where: 'id IN (2, 3, 4) AND v > 0' }).toArrowTable();
    // Rows 2 and 4 were overwritten with negative values; only 3 keeps v > 0.
    expect(got.toArray().map((r) => Number((r.toJSON() as { id: bigint }).id))).toEqual([3]);
    expect(calls.matchingRows).toBeGreaterThan(0);
  });
});
