/**
 * Key lookups in a large row group of a long-lived table, decoded page by page on the calling
 * thread: the rows equal the model's (nulls, dictionary and plain pages, a column type the page
 * decoder leaves to parquet-wasm), each value column's dictionary is decoded once per opened file
 * (not once per lookup), and the value pages are read while the key page is searched, so a lookup
 * in a page not read before costs one data round trip.
 */
import { describe, expect, it } from 'vitest';
import { ParquetDataFile } from '@tidemark/format';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '../src/index.js';
import { PAGE_SELECT_MIN_ROWS } from '../src/read/page-filter.js';
import { sharedReadCache } from '../src/read/read-cache.js';
import { countingRequests } from './helpers.js';

const ROWS = 200_000;

let n = 0;
async function tableOf(spec: TableSpec, io: FileIO): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://lookup-pages-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

type Row = {
  id: bigint;
  name: string | null;
  city: string | null;
  amount: number | null;
  grade: number;
  active: boolean;
};

function model(i: number): Row {
  return {
    id: BigInt(i * 3),
    name: i % 13 === 0 ? null : `customer-${(i * 7919).toString(36).padStart(9, '0')}`,
    city: i % 9 === 0 ? null : `city-${i % 40}`,
    amount: i % 17 === 0 ? null : (i % 6000) / 4,
    grade: i % 11,
    active: i % 3 === 0,
  };
}

function rowsOf(t: { toArray(): { toJSON(): unknown }[] }, columns: readonly (keyof Row)[]): unknown[][] {
  return t.toArray().map((r) => {
    const o = r.toJSON() as Record<string, unknown>;
    return columns.map((c) => o[c]);
  });
}

const FIELDS = [
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'name', type: 'STRING' },
  { name: 'city', type: 'STRING' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'grade', type: 'INT' },
  { name: 'active', type: 'BOOLEAN' },
];

describe('key lookups in a large row group, decoded by pages', () => {
  it('find the model rows; dictionaries are decoded once per file; a lookup in a new page is one data round trip', async () => {
    // Every request waits, so that requests issued together overlap as on an object store.
    const counter = countingRequests(new MemoryFileIO(), (r) => (String(r.path).includes('/bucket-') ? 'data' : 'other'), 5);
    const table = await tableOf(
      // No decoded rows kept between lookups: each lookup decodes its pages.
      { fields: FIELDS, primaryKeys: ['id'], options: { bucket: '1', 'lookup.cache-max-memory-size': '1 b' } },
      counter.io,
    );
    await table.append(Array.from({ length: ROWS }, (_, i) => model(i)));
    const files = (await table.newRead().plan()).splits.flatMap((s) => s.files);
    expect(files.map((f) => f.meta.rowCount)).toEqual([ROWS]);
    expect(ROWS).toBeGreaterThan(PAGE_SELECT_MIN_ROWS);
    const values: (keyof Row)[] = ['id', 'name', 'city', 'amount', 'grade'];
    const lookup = async (i: number, columns = values): Promise<unknown[][]> =>
      rowsOf(await table.newRead({ where: `id = ${i * 3}`, columns }).toArrowTable(), columns);
    const expected = (i: number, columns = values): unknown[][] => [columns.map((c) => model(i)[c])];

    expect(await lookup(7)).toEqual(expected(7));
    const file: ParquetDataFile = await sharedReadCache(table.context).parquetFile(files[0]!.path, () =>
      Promise.reject(new Error('the lookup did not keep the opened file')),
    );
    const decoded = file.dictionaryPagesDecoded;
    // city, amount, grade and _VALUE_KIND repeat: dictionary-encoded; the first lookup decoded theirs.
    expect(decoded).toBeGreaterThanOrEqual(3);
    const pages = (await file.columnPages(0, 'id'))!;
    expect(pages.pages.length).toBeGreaterThan(4);
    for (const [k, page] of pages.pages.entries()) {
      if (k === 0) continue;
      // A key in the middle of a page none of the lookups read before.
      const i = Math.floor((page.firstRow + (pages.pages[k + 1]?.firstRow ?? ROWS)) / 2);
      counter.take();
      expect(await lookup(i)).toEqual(expected(i));
      const requests = counter.take();
      expect(requests['data'], `data reads of the lookup of row ${i}`).toBeGreaterThan(0);
      // One round for the snapshot check, one for the data: the value pages are not a second round.
      expect(requests['roundTrips'], `round trips of the lookup of row ${i}`).toBe(2);
    }
    expect(file.dictionaryPagesDecoded).toBe(decoded);
    // Rows with nulls in the value columns, and a boolean column (decoded by parquet-wasm).
    for (const i of [0, 13, 9 * 17 * 100, ROWS - 1]) {
      expect(await lookup(i)).toEqual(expected(i));
      expect(await lookup(i, ['id', 'active', 'name'])).toEqual(expected(i, ['id', 'active', 'name']));
    }
    // Absent keys between existing ones find nothing.
    expect((await table.newRead({ where: `id = ${1000 * 3 + 1}` }).toArrowTable()).numRows).toBe(0);
    const many = [5, 77_777, 150_001, 199_998];
    const t = await table.newRead({ where: `id IN (${many.map((i) => i * 3).join(', ')})`, columns: values }).toArrowTable();
    expect(rowsOf(t, values).sort((a, b) => Number((a[0] as bigint) - (b[0] as bigint)))).toEqual(many.flatMap((i) => expected(i)));
  });
});
